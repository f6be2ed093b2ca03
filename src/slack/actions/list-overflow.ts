import type { App, BlockAction } from "@slack/bolt";
import { CARD_ACTIONS, LIST_ACTIONS } from "../../ids.ts";
import type { ListenerKit } from "../kit.ts";
import { openCancelConfirm } from "../views/cancel-confirm.ts";
import { openEditForm } from "../views/event-form.ts";
import { type ActionArgs, eventOpener } from "./event-opener.ts";
import { actionValue } from "./payload.ts";

/** The overflow menu beside each event in `/onair list`: `<card action>|<eventId>`. */
export function register(app: App, kit: ListenerKit): void {
  app.action<BlockAction>(LIST_ACTIONS.overflow, async (args: ActionArgs) => {
    const [action, eventId = ""] = actionValue(args.body).split("|");
    const open = action === CARD_ACTIONS.cancel ? openCancelConfirm : openEditForm;
    await eventOpener(kit, "list menu", open, () => eventId)(args);
  });
}
