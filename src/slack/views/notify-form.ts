import type { AllMiddlewareArgs, App, SlackViewMiddlewareArgs } from "@slack/bolt";
import type { WebClient } from "@slack/web-api";
import { buildNotifyForm, readNotifyForm } from "../../blocks/dialogs.ts";
import type { ViewStateValues } from "../../blocks/view-state.ts";
import type { Actor } from "../../domain/directory.ts";
import { isUserMistake } from "../../domain/errors.ts";
import { loadManaged } from "../../domain/event-lifecycle.ts";
import { fieldTextOf, notifyChannel, requireLiveChannel } from "../../domain/notify.ts";
import { userText } from "../../domain/text.ts";
import { NOTIFY_FIELDS, VIEWS } from "../../ids.ts";
import { reportFailure } from "../failure.ts";
import { actorOf, type ListenerKit } from "../kit.ts";
import { decodeMeta, encodeMeta, openThenFill } from "../modal.ts";
import { tellUser } from "../reply.ts";
import { claimSubmission, unavailableText } from "./once.ts";

/** The card's Notify button: pick a channel (and reminders), then the event subscribes it. */
export async function openNotifyForm(
  kit: ListenerKit,
  client: WebClient,
  actor: Actor,
  triggerId: string,
  eventId: string,
  channel?: string,
): Promise<void> {
  await openThenFill(kit.deps, client, triggerId, "Notify a channel", async () => {
    const { event } = await loadManaged(kit.deps, actor, eventId);
    return buildNotifyForm(
      event,
      encodeMeta({ eventId: event.id, ...(channel ? { channel } : {}) }),
    );
  });
}

export function register(app: App, kit: ListenerKit): void {
  const { deps } = kit;
  app.view(
    VIEWS.notify,
    async ({ ack, body, view, client, context }: SlackViewMiddlewareArgs & AllMiddlewareArgs) => {
      const form = readNotifyForm((view.state?.values ?? {}) as ViewStateValues);
      if (!form.channel) {
        await ack({ response_action: "errors", errors: form.errors });
        return;
      }
      const actor = actorOf(kit, context, body.user.id, client, body.team?.id);
      const meta = decodeMeta(view.private_metadata);
      // Said under the field, with the form still open: who may post where, and where the app can.
      try {
        await requireLiveChannel(actor, form.channel, meta.channel);
      } catch (err) {
        if (!isUserMistake(err)) throw err;
        await ack({
          response_action: "errors",
          errors: { [NOTIFY_FIELDS.channel]: fieldTextOf(err) },
        });
        return;
      }
      const claim = await claimSubmission(deps, actor.team, view);
      if (claim === "unavailable") {
        await ack({
          response_action: "errors",
          errors: { [NOTIFY_FIELDS.channel]: unavailableText("Notify") },
        });
        return;
      }
      await ack();
      if (claim === "repeat") return;
      const tell = (text: string) => tellUser(client, actor.user, { text }, meta.channel);
      try {
        const record = await notifyChannel(deps, actor, {
          eventId: meta.eventId ?? "",
          channel: form.channel,
          ...(meta.channel ? { fromChannel: meta.channel } : {}),
          remindersMin: form.reminders,
          ...(form.noise ? { noise: form.noise } : {}),
        });
        await tell(
          `:loudspeaker: <#${form.channel}> now gets the live card of *${userText(record.title ?? record.eventId, 200)}*.`,
        );
      } catch (err) {
        await reportFailure(deps, "notify", err, tell);
      }
    },
  );
}
