import type { AllMiddlewareArgs, App, SlackEventMiddlewareArgs } from "@slack/bolt";
import type { ListenerKit } from "../kit.ts";
import { forgetInstall } from "./uninstall-scope.ts";

/**
 * Only the bot token's end means the app is gone; a user token revoked alone changes nothing we
 * keep (the app acts with its bot token). Slack sends this and app_uninstalled in either order.
 */
export function register(app: App, kit: ListenerKit): void {
  app.event(
    "tokens_revoked",
    async ({
      event,
      body,
      context,
    }: SlackEventMiddlewareArgs<"tokens_revoked"> & AllMiddlewareArgs) => {
      if ((event.tokens.bot ?? []).length === 0) return;
      await forgetInstall(kit, body as never, context, "tokens_revoked");
    },
  );
}
