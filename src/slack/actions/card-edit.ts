import type { App, BlockAction } from "@slack/bolt";
import { CARD_ACTIONS } from "../../ids.ts";
import type { ListenerKit } from "../kit.ts";
import { openEditForm } from "../views/event-form.ts";
import { eventOpener } from "./event-opener.ts";

/** The card's Edit button: opens the form (organizer or admin only; the form checks). */
export function register(app: App, kit: ListenerKit): void {
  app.action<BlockAction>(CARD_ACTIONS.edit, eventOpener(kit, "Edit button", openEditForm));
}
