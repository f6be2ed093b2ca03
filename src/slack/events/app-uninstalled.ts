import type { AllMiddlewareArgs, App, SlackEventMiddlewareArgs } from "@slack/bolt";
import type { ListenerKit } from "../kit.ts";
import { forgetInstall } from "./uninstall-scope.ts";

/** The app was removed from the workspace (or the org): forget what that install held. */
export function register(app: App, kit: ListenerKit): void {
  app.event(
    "app_uninstalled",
    async ({ body, context }: SlackEventMiddlewareArgs<"app_uninstalled"> & AllMiddlewareArgs) => {
      await forgetInstall(kit, body as never, context, "app_uninstalled");
    },
  );
}
