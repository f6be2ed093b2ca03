import type { App } from "@slack/bolt";
import type { ListenerKit } from "../kit.ts";
import * as scheduleEvent from "./schedule-event.ts";

/** Global and message shortcuts. */
export function registerShortcuts(app: App, kit: ListenerKit): void {
  scheduleEvent.register(app, kit);
}
