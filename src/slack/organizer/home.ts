import type { WebClient } from "@slack/web-api";
import type { Deps } from "../../deps.ts";
import { effectiveSettings, inAudience, relayCredentials, slackProfile } from "../access.ts";
import { buildHome, type HomeEvent, type HomeInput } from "../blocks/home.ts";
import { plainMessage } from "./common.ts";

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
    }))
    .sort((a, b) => (a.start ?? Number.MAX_SAFE_INTEGER) - (b.start ?? Number.MAX_SAFE_INTEGER));
}

/** Publishes the user's App Home; failures are logged, never thrown (it is a side view). */
export async function publishHome(
  deps: Deps,
  client: WebClient,
  team: string,
  user: string,
): Promise<void> {
  try {
    const settings = await effectiveSettings(deps, team);
    const [link, events, profile, canSchedule, canMint] = await Promise.all([
      deps.store.users.get(team, user),
      upcomingEvents(deps, team, user),
      slackProfile(client, user),
      inAudience(client, user, settings.policy.whoMaySchedule),
      inAudience(client, user, settings.policy.whoMayMint),
    ]);
    let tokens: HomeInput["tokens"];
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
    const view = buildHome({
      ...(tokens ? { tokens } : {}),
      ...(link ? { link: { email: link.email, userId: link.userId } } : {}),
      events,
      canSchedule,
      canMint,
      isAdmin: profile.isAdmin,
      settingsButton: true,
    });
    await client.views.publish({ user_id: user, view });
  } catch (err) {
    deps.logger.warn({ err }, "could not publish App Home");
  }
}
