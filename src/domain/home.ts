import type { Deps } from "../deps.ts";
import type { AccessToken } from "../upstream/relay/schemas.ts";
import { effectiveSettings, inAudience, relayCredentials } from "./access.ts";
import type { Actor } from "./directory.ts";
import { plainMessage } from "./errors.ts";

export interface HomeEvent {
  eventId: string;
  title: string;
  start?: number;
  /** The events service no longer has it: listed so Home agrees with `/onair list`, inert. */
  gone?: boolean;
}

export interface HomeData {
  link?: { email: string; userId: number };
  /** Upcoming, soonest first. */
  events: HomeEvent[];
  canSchedule: boolean;
  canMint: boolean;
  isAdmin: boolean;
  /** For those who may mint: the enterprise's live tokens, or why they can't be listed. */
  tokens?: { list: readonly AccessToken[]; now: number } | { error: string };
}

/** The user's upcoming events from the store (kept fresh by list, show, schedule and edit). */
export async function upcomingEvents(deps: Deps, team: string, user: string): Promise<HomeEvent[]> {
  const now = deps.now();
  const records = await deps.store.events.list(team);
  return records
    .filter((r) => r.organizer === user && !r.cancelled)
    .filter((r) => typeof r.lastEnd !== "number" || r.lastEnd >= now)
    .map((r) => ({
      eventId: r.eventId,
      title: r.title ?? r.eventId,
      ...(typeof r.start === "number" ? { start: r.start } : {}),
      ...(r.gone ? { gone: true } : {}),
    }))
    .sort((a, b) => (a.start ?? Number.MAX_SAFE_INTEGER) - (b.start ?? Number.MAX_SAFE_INTEGER));
}

/** What the user's App Home shows. */
export async function homeData(deps: Deps, actor: Actor): Promise<HomeData> {
  const { team, user, directory } = actor;
  const settings = await effectiveSettings(deps, team);
  const [link, events, profile, canSchedule, canMint] = await Promise.all([
    deps.store.users.get(team, user),
    upcomingEvents(deps, team, user),
    directory.profile(user),
    inAudience(directory, user, settings.policy.whoMaySchedule, settings.policy),
    inAudience(directory, user, settings.policy.whoMayMint, settings.policy),
  ]);
  let tokens: HomeData["tokens"];
  if (canMint) {
    try {
      tokens = {
        list: await deps.relay.listAccessTokens(relayCredentials(settings)),
        now: deps.now(),
      };
    } catch (err) {
      deps.logger.warn({ err }, "App Home: relay tokens not listed");
      tokens = { error: plainMessage(err) };
    }
  }
  return {
    ...(tokens ? { tokens } : {}),
    ...(link ? { link: { email: link.email, userId: link.userId } } : {}),
    events,
    canSchedule,
    canMint,
    isAdmin: profile.isAdmin,
  };
}
