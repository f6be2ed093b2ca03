import { CARD_ACTIONS } from "../ids.ts";
import type { Event, EventState } from "../upstream/events/schemas.ts";
import {
  escapeMrkdwn,
  type KnownBlock,
  mrkdwnWithin,
  safeLink,
  shownAsWritten,
  slackDate,
  truncate,
  userText,
  utcFallback,
} from "./kit.ts";
import { recurrenceInWords } from "./recurrence.ts";

export interface EventCardLive {
  state: EventState;
  present: number;
  peak: number;
  unique: number;
  instanceId?: string;
  /** During PREP_EVENT: who of the staff is already in (display names). */
  staffIn?: { panelists: string[]; moderators: string[] };
  /**
   * When the instance ended (decided by domain/instance-end.ts): the card says "Ended" and
   * shows the final figures instead of who is in now.
   */
  endedAt?: number;
  /** After an ended instance of a series: when the next occurrence starts. */
  next?: number;
}

export interface EventCardInput {
  event: Event;
  live?: EventCardLive;
  cancelled?: boolean;
  /** The events service no longer has the event (deleted outside On Air, or a sandbox reset). */
  gone?: boolean;
  /** Live notices are off in this channel: the figures are frozen, and the card says so. */
  muted?: boolean;
  /** The channel's noise level, shown so readers know what the thread will carry. */
  noise?: string;
}

const STATE_WORDS: Readonly<Record<EventState, string>> = {
  NOT_STARTED: ":white_circle: Not started yet",
  PREP_EVENT: ":large_yellow_circle: Getting ready (not broadcast yet)",
  IN_EVENT: ":red_circle: Live now",
};

export function stateInWords(state: string): string {
  // A state this app does not know comes from upstream: escaped and cut, like any text it sends.
  return (STATE_WORDS as Record<string, string>)[state] ?? `State: ${userText(state, 40)}`;
}

const ENDED_WORDS = ":black_circle: Ended";

/**
 * How every surface (card, unfurl, App Home, `/onair list` and `show`) says an instance's state:
 * "Ended" with when (and a series' next start) once it has ended, else its live state.
 */
export function liveStateInWords(
  state: string,
  ended?: { endedAt?: number | undefined; next?: number | undefined },
): string {
  if (ended?.endedAt === undefined) return stateInWords(state);
  const next = ended.next !== undefined ? ` · next ${slackDate(ended.next)}` : "";
  return `${ENDED_WORDS} ${slackDate(ended.endedAt)}${next}`;
}

/** The final figures of an ended instance, as the card and the unfurl show them. */
export function finalFigures(live: { peak: number; unique: number; present: number }): string {
  return `Final figures: peak *${live.peak}* · unique *${live.unique}* · present at the end *${live.present}*`;
}

/** The description as a card shows it: outer blank space gone, no run of blank lines, cut. */
export function descriptionText(description: string, max: number): string | undefined {
  const tidy = description
    .replace(/\r\n?/g, "\n")
    .replace(/[ \t]+\n/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  return tidy ? mrkdwnWithin(tidy, max) : undefined;
}

/** Characters of the description a channel's card shows (`/onair show` shows more). */
const CARD_DESCRIPTION_MAX = 500;

/** How every surface (card, App Home, `/onair list`) says the events service lost the event. */
export const GONE_WORDS =
  ":grey_question: Gone — the live events service no longer has this event.";

const NAMES_MAX = 1200;

function namesList(names: readonly string[]): string {
  if (names.length === 0) return "none yet";
  const text = names.map((n) => escapeMrkdwn(n)).join(", ");
  if (text.length <= NAMES_MAX) return text;
  // Cut the raw names, then escape, so the cut never splits an entity such as `&amp;`.
  return `${mrkdwnWithin(names.join(", "), NAMES_MAX)} (${names.length} in all)`;
}

/**
 * The public card of an event, for channels: only what any channel member may see (title, time,
 * recurrence, state, the attendee join link, live figures). Organizer-only details (moderator and
 * panelist URLs, passcodes, dial-in) never appear here; see organizer-details.ts.
 */
export function buildEventCard(input: EventCardInput): { text: string; blocks: KnownBlock[] } {
  const { event, live, gone = false } = input;
  // A gone event is as final as a cancelled one: no figures, no join link, no buttons.
  const cancelled = input.cancelled === true || gone;
  const state = live?.state ?? event.status;
  const ended = !cancelled && live?.endedAt !== undefined;
  const titleCut = truncate(event.title || "Untitled event", 150);
  const blocks: KnownBlock[] = [{ type: "header", text: { type: "plain_text", text: titleCut } }];
  const lines = [
    `*When:* ${slackDate(event.start)} – ${slackDate(event.end)}`,
    `*Repeats:* ${recurrenceInWords(event.recurrencePattern)}`,
    gone
      ? `*State:* ${GONE_WORDS}`
      : cancelled
        ? "*State:* :no_entry: Cancelled — this event will not take place."
        : `*State:* ${liveStateInWords(state, live)}`,
  ];
  if (!cancelled && event.attendeeUrl) {
    lines.push(`*Join:* ${safeLink(event.attendeeUrl, "Join as an attendee")}`);
  }
  blocks.push({
    type: "section",
    block_id: "card_summary",
    text: shownAsWritten(lines.join("\n")),
  });
  if (Array.from(event.title).length > 150) {
    blocks.push({
      type: "context",
      elements: [shownAsWritten(`Full title: ${mrkdwnWithin(event.title, 2800)}`)],
    });
  }
  const description = descriptionText(event.description ?? "", CARD_DESCRIPTION_MAX);
  if (description && !cancelled) {
    blocks.push({
      type: "section",
      block_id: "card_description",
      text: shownAsWritten(description),
    });
  }
  if (live && !cancelled) {
    const figures = ended
      ? finalFigures(live)
      : `Attendees now *${live.present}* · peak *${live.peak}* · unique *${live.unique}*`;
    blocks.push({
      type: "section",
      block_id: "card_live",
      text: { type: "mrkdwn", text: figures },
    });
    // Only the roles the event has: "none yet" for a role nobody was given would be untrue.
    const staff: string[] = [];
    if (!ended && live.state === "PREP_EVENT" && live.staffIn) {
      if (event.panelists.length > 0) {
        staff.push(`*Panelists in:* ${namesList(live.staffIn.panelists)}`);
      }
      if (event.moderators.length > 0) {
        staff.push(`*Moderators in:* ${namesList(live.staffIn.moderators)}`);
      }
    }
    if (staff.length > 0) {
      blocks.push({
        type: "section",
        block_id: "card_staff",
        text: shownAsWritten(staff.join("\n")),
      });
    }
  }
  if (input.muted && !cancelled) {
    blocks.push({
      type: "context",
      elements: [
        {
          type: "mrkdwn",
          text: ":mute: Muted in this channel: the figures above are from when it was muted and no longer change. `/onair notify` here turns live updates back on.",
        },
      ],
    });
  } else if (input.noise && !cancelled) {
    blocks.push({
      type: "context",
      elements: [
        shownAsWritten(
          `Attendee notices in this channel: ${escapeMrkdwn(truncate(input.noise, 200))}`,
        ),
      ],
    });
  }
  // A cancelled or gone event has nothing left to do: its card keeps no buttons.
  if (!cancelled) {
    blocks.push({
      type: "actions",
      block_id: "card_actions",
      elements: [
        button("Edit", CARD_ACTIONS.edit, event.id),
        { ...button("Cancel event", CARD_ACTIONS.cancel, event.id), style: "danger" },
        button("Notify a channel", CARD_ACTIONS.notify, event.id),
        button("Attendance", CARD_ACTIONS.attendance, event.id),
      ],
    });
  }
  const status = gone
    ? "gone"
    : cancelled
      ? "cancelled"
      : ended
        ? "ended"
        : stateInWords(state)
            .replace(/^:[a-z_]+: /, "")
            .toLowerCase();
  // The fallback is what notifications show: the title escaped like everywhere else.
  const text = `${userText(event.title || "Untitled event", 200)} — ${utcFallback(event.start)} (${status})`;
  return { text, blocks };
}

function button(text: string, actionId: string, value: string) {
  return {
    type: "button" as const,
    text: { type: "plain_text" as const, text },
    action_id: actionId,
    value: value.slice(0, 2000),
  };
}
