import type { WebClient } from "@slack/web-api";
import type { Deps } from "../../deps.ts";
import { buildNotifyForm } from "../blocks/dialogs.ts";
import { DEFAULT_REMINDERS, REMINDER_CHOICES } from "../blocks/event-form.ts";
import {
  decodeMeta,
  encodeMeta,
  fetchEvent,
  openThenFill,
  organizerLink,
  ownedRecord,
  reportFailure,
  tellUser,
} from "./common.ts";
import { noiseOf, type ViewStateValues } from "./form.ts";
import { NOTIFY_FIELDS } from "./ids.ts";
import { live } from "./live.ts";

/** The card's Notify button: pick a channel (and reminders), then the live area subscribes it. */
export async function openNotifyForm(
  deps: Deps,
  client: WebClient,
  args: { team: string; user: string; triggerId: string; eventId: string; channel?: string },
): Promise<void> {
  await openThenFill(deps, client, args.triggerId, "Notify a channel", async () => {
    const record = await ownedRecord(deps, args.team, args.user, args.eventId);
    const event = await fetchEvent(
      deps,
      args.team,
      await organizerLink(deps, args.team, record),
      record,
    );
    return buildNotifyForm(
      event,
      encodeMeta({ eventId: event.id, ...(args.channel ? { channel: args.channel } : {}) }),
    );
  });
}

export async function submitNotify(
  deps: Deps,
  client: WebClient,
  args: { team: string; user: string; privateMetadata: string; values: ViewStateValues },
): Promise<void> {
  const meta = decodeMeta(args.privateMetadata);
  try {
    const channel =
      args.values[NOTIFY_FIELDS.channel]?.[NOTIFY_FIELDS.channel]?.selected_conversation;
    const rem = args.values[NOTIFY_FIELDS.reminders]?.[NOTIFY_FIELDS.reminders];
    const reminders = rem
      ? (rem.selected_options ?? [])
          .map((o) => Number(o.value))
          .filter((m) => (REMINDER_CHOICES as readonly number[]).includes(m))
      : [...DEFAULT_REMINDERS];
    const noise = noiseOf(args.values[NOTIFY_FIELDS.noise]?.[NOTIFY_FIELDS.noise]);
    const record = await ownedRecord(deps, args.team, args.user, meta.eventId ?? "");
    if (!channel) return;
    await live.subscribeChannel(deps, {
      team: args.team,
      eventId: record.eventId,
      channel,
      user: args.user,
      remindersMin: reminders,
      ...(noise ? { noise } : {}),
    });
    await tellUser(
      client,
      args.user,
      {
        text: `:loudspeaker: <#${channel}> now gets the live card of *${(record.title ?? record.eventId).slice(0, 200)}*.`,
      },
      meta.channel,
    );
  } catch (err) {
    await reportFailure(deps, client, args.user, err, "notify", meta.channel);
  }
}
