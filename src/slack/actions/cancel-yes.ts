import type { App, BlockAction } from "@slack/bolt";
import { buildNoticeModal } from "../../blocks/event-form.ts";
import { cancelEvent } from "../../domain/cancel.ts";
import { plainMessage, userMessageOf } from "../../domain/errors.ts";
import { userText } from "../../domain/text.ts";
import { CANCEL_ACTIONS } from "../../ids.ts";
import { reportFailure } from "../failure.ts";
import { publishHome } from "../home.ts";
import { actorOf, type ListenerKit } from "../kit.ts";
import { decodeMeta } from "../modal.ts";
import { tellUser } from "../reply.ts";
import { claimSubmission } from "../views/once.ts";
import type { ActionArgs } from "./event-opener.ts";

/**
 * The cancel confirmation's red "Yes, cancel it": DELETE, then webhooks, reminders and cards
 * (cancelEvent checks who may). The modal then says what happened, and so does a message.
 */
export function register(app: App, kit: ListenerKit): void {
  const { deps } = kit;
  app.action<BlockAction>(
    CANCEL_ACTIONS.yes,
    async ({ ack, body, client, context }: ActionArgs) => {
      await ack();
      const view = body.view;
      const meta = decodeMeta(view?.private_metadata);
      const actor = actorOf(kit, context, body.user.id, client, body.team?.id);
      // A double press of the red button (or a press Slack sent again) cancels once; the first
      // press's modal says how it went.
      if (view) {
        const claim = await claimSubmission(deps, actor.team, view, CANCEL_ACTIONS.yes);
        if (claim === "repeat") return;
        if (claim === "unavailable") {
          await tellUser(
            client,
            actor.user,
            {
              text: "On Air could not record your cancel just now, so nothing was done. Press *Yes, cancel it* again in a moment.",
            },
            meta.channel,
          );
          return;
        }
      }
      const tell = (text: string) => tellUser(client, actor.user, { text }, meta.channel);
      // The modal stops offering the button at once and says how it went.
      const show = async (text: string) => {
        if (!view?.id) return;
        await client.views
          .update({ view_id: view.id, view: buildNoticeModal("Cancel event", text) })
          .catch((err: unknown) => deps.logger.info({ err }, "cancel: the modal was closed"));
      };
      try {
        const done = await cancelEvent(deps, actor, meta.eventId ?? "");
        const title = userText(done.title, 200);
        const text = done.cleanupFailed
          ? `:wastebasket: Cancelled *${title}* on the live events service, but its channel cards and reminders could not all be cleaned up: ${plainMessage(done.cleanupFailed)}`
          : `:wastebasket: Cancelled *${title}*. Its channel cards say so and its reminders are off.`;
        await show(text);
        await tell(text);
        await publishHome(deps, client, actor);
      } catch (err) {
        await show(userMessageOf(err));
        await reportFailure(deps, "cancel", err, tell);
      }
    },
  );
}
