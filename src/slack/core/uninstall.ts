import type { AllMiddlewareArgs, App, SlackEventMiddlewareArgs } from "@slack/bolt";
import type { Deps } from "../../deps.ts";

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

function teamOf(body: { team_id?: string }, context: { teamId?: string | undefined }) {
  return context.teamId ?? body.team_id;
}

export function registerUninstall(app: App, deps: Deps): void {
  app.event(
    "app_uninstalled",
    async ({ body, context }: SlackEventMiddlewareArgs<"app_uninstalled"> & AllMiddlewareArgs) => {
      const team = teamOf(body, context);
      if (!team) {
        deps.logger.warn("app_uninstalled without a team id; nothing deleted");
        return;
      }
      await forgetTeam(deps, team, "app_uninstalled");
      if (body.is_enterprise_install === true && context.enterpriseId) {
        await forgetTeam(deps, context.enterpriseId, "app_uninstalled (org)");
      }
    },
  );

  app.event(
    "tokens_revoked",
    async ({
      event,
      body,
      context,
    }: SlackEventMiddlewareArgs<"tokens_revoked"> & AllMiddlewareArgs) => {
      // Only the bot token's end means the app is gone; a user token revoked alone changes nothing
      // we keep (the app acts with its bot token).
      if ((event.tokens.bot ?? []).length === 0) return;
      const team = teamOf(body, context);
      if (!team) {
        deps.logger.warn("tokens_revoked without a team id; nothing deleted");
        return;
      }
      await forgetTeam(deps, team, "tokens_revoked");
    },
  );
}
