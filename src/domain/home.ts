import type { Deps } from "../deps.ts";
import type { EventRecord } from "../store/index.ts";
import type { AccessToken } from "../upstream/relay/schemas.ts";
import { effectiveSettings, inAudience, relayCredentials } from "./access.ts";
import type { Actor } from "./directory.ts";
import { plainMessage } from "./errors.ts";
import { type LiveStatus, liveStatus, onAir } from "./live-status.ts";

export interface HomeEvent {
  eventId: string;
  title: string;
  start?: number;
  /** The events service no longer has it: listed so Home agrees with `/onair list`, inert. */
  gone?: boolean;
  /** Its current instance, once the live engine has heard of one (ended, or its state). */
  live?: LiveStatus;
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
  const upcoming = (r: EventRecord) => typeof r.lastEnd !== "number" || r.lastEnd >= now;
  // A day past its schedule is looked at too: one still on the air (running over) stays listed.
  const records = (await deps.store.events.list(team))
    .filter((r) => r.organizer === user && !r.cancelled)
    .filter((r) => typeof r.lastEnd !== "number" || r.lastEnd >= now - 86_400_000);
  // Only events with a card have live figures; a few at a time (each is a read on the engine).
  const lives = new Map<string, LiveStatus>();
  const notified = records.filter((r) => r.subscriptions.length > 0 && !r.gone);
  for (let i = 0; i < notified.length; i += 5) {
    await Promise.all(
      notified.slice(i, i + 5).map(async (r) => {
        const status = await liveStatus(deps, r);
        if (status?.state !== undefined || status?.endedAt !== undefined) {
          lives.set(r.eventId, status);
        }
      }),
    );
  }
  return records
    .filter((r) => upcoming(r) || onAir(lives.get(r.eventId)))
    .map((r) => {
      const live = lives.get(r.eventId);
      return {
        eventId: r.eventId,
        title: r.title ?? r.eventId,
        ...(typeof r.start === "number" ? { start: r.start } : {}),
        ...(r.gone ? { gone: true } : {}),
        ...(live ? { live } : {}),
      };
    })
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
