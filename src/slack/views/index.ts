import type { App } from "@slack/bolt";
import type { ListenerKit } from "../kit.ts";
import * as eventForm from "./event-form.ts";
import * as notifyForm from "./notify-form.ts";
import * as settings from "./settings.ts";
import * as tokenForm from "./token-form.ts";

/** Modal submissions. */
export function registerViews(app: App, kit: ListenerKit): void {
  for (const listener of [eventForm, tokenForm, notifyForm, settings]) {
    listener.register(app, kit);
  }
}
