import { CARD_ACTIONS, LIST_ACTIONS } from "../ids.ts";
import type { Event } from "../upstream/events/schemas.ts";
import { GONE_WORDS, liveStateInWords } from "./event-card.ts";
import { escapeMrkdwn, type KnownBlock, slackDate, truncate } from "./kit.ts";
import { recurrenceInWords } from "./recurrence.ts";

export interface ListedEvent {
  eventId: string;
  /** The fresh GET, or undefined when the service no longer knows it. */
  event?: Event;
  /** Known title when the event could not be read. */
  title?: string;
  cancelled?: boolean;
  /** When it next happens, if not its first start (a running series). */
  next?: number | undefined;
  /** The current instance as the live engine has it (the card's words: ended, or its state). */
  live?: { state: string | undefined; endedAt?: number; next?: number };
}

/** Per event: a section and its buttons; 50 blocks per message → at most 23 events shown. */
const MAX_SHOWN = 23;

/** `/onair list`: the user's events, soonest first (the caller sorts). */
export function buildEventList(events: readonly ListedEvent[]): {
  text: string;
  blocks: KnownBlock[];
} {
  if (events.length === 0) {
    const text =
      "You have no upcoming events scheduled through On Air. Schedule one with `/onair schedule`.";
    return { text, blocks: [{ type: "section", text: { type: "mrkdwn", text } }] };
  }
  const blocks: KnownBlock[] = [
    {
      type: "section",
      text: { type: "mrkdwn", text: `*Your events* (${events.length}), soonest first:` },
    },
  ];
  for (const item of events.slice(0, MAX_SHOWN)) {
    const e = item.event;
    const title = escapeMrkdwn(truncate(e?.title ?? item.title ?? item.eventId, 200));
    const line = e
      ? `*${title}*\n${item.next !== undefined && item.next !== e.start ? `next ${slackDate(item.next)}` : slackDate(e.start)} · ${recurrenceInWords(e.recurrencePattern)} · ${liveStateInWords(item.live?.state ?? e.status, item.live)}\nid \`${escapeMrkdwn(truncate(e.id, 80))}\``
      : `*${title}*\n${GONE_WORDS} (id \`${escapeMrkdwn(truncate(item.eventId, 80))}\`)`;
    blocks.push({
      type: "section",
      text: { type: "mrkdwn", text: line },
      ...(e && !item.cancelled
        ? {
            accessory: {
              type: "overflow" as const,
              action_id: LIST_ACTIONS.overflow,
              options: [
                {
                  text: { type: "plain_text" as const, text: "Edit" },
                  value: `${CARD_ACTIONS.edit}|${e.id}`.slice(0, 150),
                },
                {
                  text: { type: "plain_text" as const, text: "Cancel event" },
                  value: `${CARD_ACTIONS.cancel}|${e.id}`.slice(0, 150),
                },
              ],
            },
          }
        : {}),
    });
  }
  if (events.length > MAX_SHOWN) {
    blocks.push({
      type: "context",
      elements: [
        {
          type: "mrkdwn",
          text: `…and ${events.length - MAX_SHOWN} more. Use \`/onair show <event>\` for any of them.`,
        },
      ],
    });
  }
  return { text: `Your events (${events.length})`, blocks };
}
