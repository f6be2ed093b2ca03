import type { App } from "@slack/bolt";
import type { Deps } from "../deps.ts";
import { registerActions } from "./actions/index.ts";
import { registerCommands } from "./commands/index.ts";
import { registerEvents } from "./events/index.ts";
import { registerErrorSink } from "./failure.ts";
import { registerFunctions } from "./functions/index.ts";
import { createListenerKit } from "./kit.ts";
import { registerShortcuts } from "./shortcuts/index.ts";
import { registerViews } from "./views/index.ts";

/**
 * Registers every listener, one folder per kind (the starter template's shape): each listener
 * acks, calls a domain action, renders with a Block Kit builder and replies. Failures a listener
 * does not answer reach `app.error`, the last sink.
 */
export function registerListeners(app: App, deps: Deps): void {
  const kit = createListenerKit(deps);
  registerCommands(app, kit);
  registerActions(app, kit);
  registerViews(app, kit);
  registerShortcuts(app, kit);
  registerEvents(app, kit);
  registerFunctions(app, kit);
  registerErrorSink(app, deps);
}
