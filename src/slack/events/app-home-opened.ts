import type { AllMiddlewareArgs, App, SlackEventMiddlewareArgs } from "@slack/bolt";
import { publishHome } from "../home.ts";
import { actorOf, type ListenerKit } from "../kit.ts";

/** The Home tab: the user's events, what they may do, and (for minters) the live tokens. */
export function register(app: App, kit: ListenerKit): void {
  app.event(
    "app_home_opened",
    async ({
      event,
      client,
      context,
    }: SlackEventMiddlewareArgs<"app_home_opened"> & AllMiddlewareArgs) => {
      if (event.tab !== "home") return;
      await publishHome(kit.deps, client, actorOf(kit, context, event.user, client));
    },
  );
}
