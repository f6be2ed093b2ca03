import type { App } from "@slack/bolt";
import type { Deps } from "../deps.ts";
import { registerLive } from "../live/register.ts";
import { registerCore } from "./core/index.ts";
import { registerOrganizer } from "./organizer/index.ts";
import { type CommandRouter, registerCommandRouter } from "./router.ts";

/**
 * Registers every listener. Each feature area owns its register function and its files:
 * core (settings, linking, uninstall), organizer workflows (schedule … tokens, App Home) and
 * live notifications (notify, mute, the card's live actions).
 */
export function registerListeners(app: App, deps: Deps): CommandRouter {
  const router = registerCommandRouter(app, deps);
  registerCore(app, router, deps);
  registerOrganizer(app, router, deps);
  registerLive(app, router, deps);
  return router;
}
