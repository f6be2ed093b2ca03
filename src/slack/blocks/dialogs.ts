import type { Event } from "../../upstream/events/schemas.ts";
import { NOTIFY_FIELDS, VIEWS } from "../organizer/ids.ts";
import { DEFAULT_REMINDERS, REMINDER_CHOICES } from "./event-form.ts";
import { escapeMrkdwn, type ModalView, plain, slackDate, truncate } from "./kit.ts";
import { noiseInput } from "./noise.ts";
import { recurrenceInWords } from "./recurrence.ts";

/** Cancel asks first: this modal is the question; submitting it is the yes. */
export function buildCancelConfirm(event: Event, privateMetadata: string): ModalView {
  const series = event.recurrencePattern && event.recurrencePattern.recurrenceCount > 1;
  return {
    type: "modal",
    callback_id: VIEWS.cancel,
    private_metadata: privateMetadata,
    title: plain("Cancel event?", 24),
    submit: plain("Yes, cancel it", 24),
    close: plain("Keep it", 24),
    blocks: [
      {
        type: "section",
        text: {
          type: "mrkdwn",
          text: truncate(
            `Cancel *${escapeMrkdwn(truncate(event.title, 500))}* on ${slackDate(event.start)}${series ? ` (${recurrenceInWords(event.recurrencePattern)}: the whole series)` : ""}? It is deleted from the live events service, its channel cards are marked cancelled and its reminders stop. This can't be undone.`,
            3000,
          ),
        },
      },
    ],
  };
}

function minutesWords(m: number): string {
  if (m === 1440) return "1 day before";
  if (m === 60) return "1 hour before";
  return `${m} minutes before`;
}

/** The card's Notify button: which channel gets the live card, and which reminders. */
export function buildNotifyForm(event: Event, privateMetadata: string): ModalView {
  const options = REMINDER_CHOICES.map((m) => ({
    text: plain(minutesWords(m), 75),
    value: String(m),
  }));
  return {
    type: "modal",
    callback_id: VIEWS.notify,
    private_metadata: privateMetadata,
    title: plain("Notify a channel", 24),
    submit: plain("Notify", 24),
    close: plain("Cancel", 24),
    blocks: [
      {
        type: "section",
        text: {
          type: "mrkdwn",
          text: `The channel gets the live card of *${escapeMrkdwn(truncate(event.title, 500))}*, its attendee activity and the reminders you pick.`,
        },
      },
      {
        type: "input",
        block_id: NOTIFY_FIELDS.channel,
        label: plain("Channel", 2000),
        element: {
          type: "conversations_select",
          action_id: NOTIFY_FIELDS.channel,
          filter: { include: ["public", "private"], exclude_bot_users: true },
        },
      },
      noiseInput(NOTIFY_FIELDS.noise),
      {
        type: "input",
        block_id: NOTIFY_FIELDS.reminders,
        optional: true,
        label: plain("Reminders", 2000),
        element: {
          type: "checkboxes",
          action_id: NOTIFY_FIELDS.reminders,
          options,
          initial_options: options.filter((o) =>
            (DEFAULT_REMINDERS as readonly number[]).includes(Number(o.value)),
          ),
        },
      },
    ],
  };
}
