import type { Context } from "@slack/bolt";
import type { WebClient } from "@slack/web-api";
import type { Deps } from "../deps.ts";
import type { Actor } from "../domain/directory.ts";
import { DirectoryCaches } from "./directory.ts";
import { countingFetch } from "./slack-metrics.ts";

/** What every listener gets by closure: the app's deps and the per-instance Slack caches. */
export interface ListenerKit {
  readonly deps: Deps;
  readonly caches: DirectoryCaches;
}

export function createListenerKit(deps: Deps): ListenerKit {
  return {
    deps,
    caches: new DirectoryCaches(deps.logger, deps.now, countingFetch(deps.metrics)),
  };
}

/**
 * The acting user as the domain sees them. The workspace comes from Bolt's context (resolved once
 * before any listener runs), the payload's team only as a fallback for org-wide installs.
 */
export function actorOf(
  kit: ListenerKit,
  context: Context,
  user: string,
  client: WebClient,
  payloadTeam?: string | null,
): Actor {
  const team = context.teamId ?? payloadTeam ?? context.enterpriseId;
  if (!team) throw new Error("a Slack request without a workspace");
  return { team, user, directory: kit.caches.for(team, client) };
}
