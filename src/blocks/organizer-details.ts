import { emailsOf } from "../domain/people.ts";
import type { Event } from "../upstream/events/schemas.ts";
import { descriptionText, liveStateInWords } from "./event-card.ts";
import {
  escapeMrkdwn,
  type KnownBlock,
  safeLink,
  slackDate,
  truncate,
  userText,
  utcFallback,
} from "./kit.ts";
import { recurrenceInWords } from "./recurrence.ts";

const PEOPLE_SHOWN = 20;

function peopleLine(label: string, list: readonly unknown[]): string {
  const emails = emailsOf(list);
  if (emails.length === 0) return `*${label}:* none`;
  const shown = emails.slice(0, PEOPLE_SHOWN).map(escapeMrkdwn).join(", ");
  const more =
    emails.length > PEOPLE_SHOWN
      ? ` …and ${emails.length - PEOPLE_SHOWN} more (${emails.length} in all)`
      : "";
  return `*${label}:* ${shown}${more}`;
}

function link(host: string, label: string): string {
  return host ? safeLink(host, label) : "not given";
}

/**
 * Everything about an event, including what only its organizer may see: moderator and panelist
 * join links, passcodes and dial-in numbers. Send it ONLY to the organizer (ephemeral or DM),
 * never to a channel.
 */
export function buildOrganizerDetails(
  event: Event,
  heading: string,
  extra: {
    /** The current instance as the live engine has it (`/onair show`): the card's words. */
    live?: { state: string | undefined; endedAt?: number; next?: number };
    /** Show the description (`/onair show`). */
    description?: boolean;
  } = {},
): { text: string; blocks: KnownBlock[] } {
  const title = truncate(event.title || "Untitled event", 150);
  const blocks: KnownBlock[] = [
    // The heading is mrkdwn the caller builds from ids (<@U…>, <#C…>), never from user text.
    { type: "section", text: { type: "mrkdwn", text: truncate(heading, 3000) } },
    { type: "header", text: { type: "plain_text", text: title } },
  ];
  if (Array.from(event.title).length > 150) {
    blocks.push({
      type: "context",
      elements: [
        {
          type: "mrkdwn",
          text: `The title is ${Array.from(event.title).length} characters long; it is shortened here.`,
        },
      ],
    });
  }
  blocks.push({
    type: "section",
    text: {
      type: "mrkdwn",
      text: [
        `*When:* ${slackDate(event.start)} – ${slackDate(event.end)} (event zone: ${userText(event.timezone, 64)})`,
        `*Repeats:* ${recurrenceInWords(event.recurrencePattern)}`,
        `*State:* ${liveStateInWords(extra.live?.state ?? event.status, extra.live)}`,
        `*Event id:* \`${userText(event.id, 80)}\``,
      ].join("\n"),
    },
  });
  const description = extra.description ? descriptionText(event.description, 2000) : undefined;
  if (description) {
    blocks.push({
      type: "section",
      block_id: "details_description",
      text: { type: "mrkdwn", text: description, verbatim: true },
    });
  }
  const dial = Object.entries(event.dialInNumbers)
    .slice(0, 10)
    .map(([label, number]) => `${escapeMrkdwn(label)}: ${escapeMrkdwn(number)}`)
    .join(" · ");
  blocks.push({
    type: "section",
    text: {
      type: "mrkdwn",
      text: truncate(
        [
          ":lock: *Only for you, the organizer* — don't share these in a channel.",
          `*Moderators join:* ${link(event.moderatorUrl, "moderator link")}`,
          `*Panelists join:* ${link(event.panelistUrl, "panelist link")}`,
          `*Attendees join:* ${link(event.attendeeUrl, "attendee link")}`,
          `*Meeting id:* ${escapeMrkdwn(event.meetingNumericId)} · *participant passcode:* ${escapeMrkdwn(event.participantPasscode)}`,
          `*Attendee meeting id:* ${escapeMrkdwn(event.attendeeMeetingNumericId)} · *attendee passcode:* ${escapeMrkdwn(event.attendeeMeetingPasscode)}`,
          `*Dial-in:* ${dial || "none"}`,
        ].join("\n"),
        3000,
      ),
    },
  });
  blocks.push({
    type: "section",
    text: {
      type: "mrkdwn",
      text: truncate(
        [peopleLine("Panelists", event.panelists), peopleLine("Moderators", event.moderators)].join(
          "\n",
        ),
        3000,
      ),
    },
  });
  return {
    // The heading is the app's own mrkdwn; the title is not.
    text: `${truncate(heading, 200)}: ${userText(event.title, 200)} — ${utcFallback(event.start)}`,
    blocks,
  };
}
