import { DEFAULT_REMINDERS, REMINDER_CHOICES } from "../domain/event-draft.ts";
import { CANCEL_ACTIONS, NOTIFY_FIELDS, VIEWS } from "../ids.ts";
import type { NoiseLevel } from "../store/index.ts";
import type { Event } from "../upstream/events/schemas.ts";
import { escapeMrkdwn, type ModalView, plain, slackDate, truncate } from "./kit.ts";
import { noiseInput } from "./noise.ts";
import { recurrenceInWords } from "./recurrence.ts";
import { entry, noiseOf, optionsOf, type ViewStateValues } from "./view-state.ts";

/**
 * Cancel asks first: this modal is the question, and its red button the yes. Slack draws a
 * modal's submit in its primary colour whatever it says; a destructive yes is a button with
 * style "danger", as Slack's own confirmations are.
 */
export function buildCancelConfirm(event: Event, privateMetadata: string): ModalView {
  const p = event.recurrencePattern;
  const series = p && (p.recurrenceCount > 1 || p.endDate !== null);
  return {
    type: "modal",
    callback_id: VIEWS.cancel,
    private_metadata: privateMetadata,
    title: plain("Cancel event?", 24),
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
      {
        type: "actions",
        block_id: "cancel_yes",
        elements: [
          {
            type: "button",
            action_id: CANCEL_ACTIONS.yes,
            style: "danger",
            text: plain("Yes, cancel it", 75),
            value: event.id.slice(0, 2000),
          },
        ],
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

/** Reads the notify form; without a channel, the inline error to show. */
export function readNotifyForm(values: ViewStateValues): {
  channel: string | undefined;
  reminders: number[];
  noise: NoiseLevel | undefined;
  errors: Record<string, string>;
} {
  const ch = entry(values, NOTIFY_FIELDS.channel)?.selected_conversation;
  const channel = typeof ch === "string" && /^[CGD][A-Z0-9]{2,30}$/.test(ch) ? ch : undefined;
  const picked = optionsOf(values, NOTIFY_FIELDS.reminders);
  const reminders = picked
    ? picked.map(Number).filter((m) => (REMINDER_CHOICES as readonly number[]).includes(m))
    : [...DEFAULT_REMINDERS];
  return {
    channel,
    reminders,
    noise: noiseOf(entry(values, NOTIFY_FIELDS.noise)),
    errors: channel ? {} : { [NOTIFY_FIELDS.channel]: "Pick the channel that gets the live card." },
  };
}
