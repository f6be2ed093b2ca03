import type { Deps } from "../deps.ts";

/**
 * Forgets a workspace when it uninstalls the app. Slack sends app_uninstalled and tokens_revoked
 * in either order (and may redeliver either); each deletes whatever is left, so the second finds
 * nothing and the outcome is the same. Deleting the team's `sub:` records is what makes later
 * webhooks for its events post nothing.
 */
export async function forgetTeam(deps: Deps, team: string, reason: string): Promise<number> {
  const removed = await deps.store.deleteTeam(team);
  deps.logger.info({ team, removed, reason }, "deleted the team's data");
  return removed;
}
