import type { App } from "@slack/bolt";
import type { Deps } from "../../deps.ts";
import type { CommandRouter } from "../router.ts";
import { linkCommand, unlinkCommand, whoamiCommand } from "./link.ts";
import { registerSettings, settingsCommand } from "./settings.ts";
import { registerUninstall } from "./uninstall.ts";

/** Settings, linking and uninstall: what makes the app a proper Slack citizen. */
export function registerCore(app: App, router: CommandRouter, deps: Deps): void {
  router.on("settings", settingsCommand(deps));
  router.on("link", linkCommand(deps));
  router.on("unlink", unlinkCommand(deps));
  router.on("whoami", whoamiCommand(deps));
  registerSettings(app, deps);
  registerUninstall(app, deps);
}
