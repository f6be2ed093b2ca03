import type { AllMiddlewareArgs, App, SlackEventMiddlewareArgs } from "@slack/bolt";
import { forgetTeam } from "../../domain/uninstall.ts";
import type { ListenerKit } from "../kit.ts";

/** The app was removed from the workspace (or the org): forget everything of it. */
export function register(app: App, kit: ListenerKit): void {
  app.event(
    "app_uninstalled",
    async ({ body, context }: SlackEventMiddlewareArgs<"app_uninstalled"> & AllMiddlewareArgs) => {
      const team = context.teamId ?? body.team_id;
      if (!team) {
        kit.deps.logger.warn("app_uninstalled without a team id; nothing deleted");
        return;
      }
      await forgetTeam(kit.deps, team, "app_uninstalled");
      if (body.is_enterprise_install === true && context.enterpriseId) {
        await forgetTeam(kit.deps, context.enterpriseId, "app_uninstalled (org)");
      }
    },
  );
}
