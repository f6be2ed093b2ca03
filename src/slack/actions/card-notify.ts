import type { App, BlockAction } from "@slack/bolt";
import { CARD_ACTIONS } from "../../ids.ts";
import type { ListenerKit } from "../kit.ts";
import { openNotifyForm } from "../views/notify-form.ts";
import { eventOpener } from "./event-opener.ts";

/** The card's Notify button: opens the form (organizer or admin only; the form checks). */
export function register(app: App, kit: ListenerKit): void {
  app.action<BlockAction>(CARD_ACTIONS.notify, eventOpener(kit, "Notify button", openNotifyForm));
}
