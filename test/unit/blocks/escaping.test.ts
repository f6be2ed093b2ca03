import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildCancelConfirm, buildNotifyForm } from "../../../src/blocks/dialogs.ts";
import { buildEventCard } from "../../../src/blocks/event-card.ts";
import { buildEventForm, buildNoticeModal } from "../../../src/blocks/event-form.ts";
import { buildEventList } from "../../../src/blocks/event-list.ts";
import { buildHome } from "../../../src/blocks/home.ts";
import { buildOrganizerDetails } from "../../../src/blocks/organizer-details.ts";
import { reportText } from "../../../src/blocks/report.ts";
import { checkLine, settingsView } from "../../../src/blocks/settings.ts";
import { buildTokenList, buildTokenMinted } from "../../../src/blocks/tokens.ts";
import { unfurlBlocks } from "../../../src/blocks/unfurl.ts";
import { reminderText } from "../../../src/domain/reminders.ts";
import { candidatesText } from "../../../src/domain/resolve.ts";
import { addNotice, digestText, emptyPending } from "../../../src/live/digest.ts";
import { helpText } from "../../../src/slack/commands/help.ts";
import { DEFAULT_SETTINGS } from "../../../src/store/index.ts";
import type { Event } from "../../../src/upstream/events/schemas.ts";
import type { AccessToken } from "../../../src/upstream/relay/schemas.ts";
import { sampleEvent } from "../slack/blocks/fixtures.ts";

/**
 * One escaping rule: every string that did not come from this app reaches mrkdwn and message
 * `text` escaped. Every builder is walked with hostile strings (mentions, links, entities,
 * angle brackets, pipes) in every field a user or an upstream service controls; no `<…>`
 * control sequence made of them may come out, and no broadcast mention at all.
 */

const FRAGMENTS = [
  "<!channel>",
  "<!here>",
  "<!everyone>",
  "<@U0HACKER>",
  "<#C0HACKED|announcements>",
  "<!subteam^S0HACKERS>",
  "<https://evil.example|click HACK>",
  "<mailto:evil@hack.example|mail HACK>",
  "&lt;!channel&gt;",
  "&amp;",
  "<",
  ">",
  "|",
  "*bold*",
  "`code`",
  "```",
  "\n",
  "@channel",
];

const hostile = fc
  .array(fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string({ maxLength: 12 })), {
    minLength: 1,
    maxLength: 8,
  })
  .map((parts) => parts.join(""));

/** mrkdwn strings in a message or view: each block's mrkdwn text, and a message's `text`. */
function mrkdwnOf(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) {
    for (const v of value) mrkdwnOf(v, out);
    return out;
  }
  if (value && typeof value === "object") {
    const o = value as Record<string, unknown>;
    if (o.type === "mrkdwn" && typeof o.text === "string") out.push(o.text);
    for (const [k, v] of Object.entries(o)) {
      if (k === "text" && typeof v === "string" && o.type === undefined) out.push(v);
      else mrkdwnOf(v, out);
    }
  }
  return out;
}

const MARKER = /HACK|evil|hack\.example/i;

/**
 * Control sequences the hostile input could have produced: a mention, channel or broadcast
 * made of it, or a link whose words are its. A link the app made to an upstream join address
 * carries the app's own label, so its target may hold anything (it stays a link to it).
 */
function injected(texts: readonly string[]): string[] {
  const bad: string[] = [];
  for (const t of texts) {
    for (const m of t.matchAll(/<[^<>]*>/g)) {
      const seq = m[0];
      if (/^<!(channel|here|everyone)/.test(seq)) bad.push(seq);
      else if (/^<(https?:|mailto:)/i.test(seq)) {
        const label = seq.includes("|") ? seq.slice(seq.indexOf("|") + 1) : seq;
        if (MARKER.test(label)) bad.push(seq);
      } else if (MARKER.test(seq)) bad.push(seq);
    }
  }
  return bad;
}

function hostileEvent(s: string): Event {
  return sampleEvent({
    id: `evt-${s.length}`,
    title: s,
    description: s,
    attendeeUrl: s,
    moderatorUrl: s,
    panelistUrl: s,
    participantPasscode: s,
    attendeeMeetingPasscode: s,
    panelistMessage: s,
    moderatorMessage: s,
    attendeeMessage: s,
    dialInNumbers: { [s]: s },
    panelists: [{ email: s }],
    moderators: [s],
    status: s,
    timezone: s,
    recurrencePattern: {
      recurrenceType: s,
      endDate: null,
      recurrenceCount: 3,
      frequency: 1,
      daysOfWeekMask: 0,
      dayOfMonth: 0,
      weekOfMonth: "",
    },
  });
}

function hostileToken(s: string): AccessToken {
  return {
    accessToken: `tok${s}`,
    clientName: s,
    roles: [s],
    expirationDate: Date.UTC(2031, 0, 1),
  } as AccessToken;
}

const builders: Record<string, (s: string) => unknown> = {
  card: (s) =>
    buildEventCard({
      event: hostileEvent(s),
      live: {
        state: "PREP_EVENT",
        present: 1,
        peak: 1,
        unique: 1,
        staffIn: { panelists: [s], moderators: [s] },
      },
      noise: s,
    }),
  cancelledCard: (s) => buildEventCard({ event: hostileEvent(s), cancelled: true }),
  organizerDetails: (s) => buildOrganizerDetails(hostileEvent(s), "Heading"),
  list: (s) =>
    buildEventList([
      { eventId: s, event: hostileEvent(s) },
      { eventId: s, title: s },
    ]),
  home: (s) =>
    buildHome({
      link: { email: s, userId: 1 },
      events: [{ eventId: s, title: s, start: Date.UTC(2030, 0, 1) }],
      canSchedule: true,
      canMint: true,
      isAdmin: true,
      settingsButton: true,
      tokens: { list: [hostileToken(s)], now: Date.UTC(2030, 0, 1) },
    }),
  homeTokenError: (s) =>
    buildHome({
      events: [],
      canSchedule: true,
      canMint: true,
      isAdmin: false,
      settingsButton: false,
      tokens: { error: s },
    }),
  cancelConfirm: (s) => buildCancelConfirm(hostileEvent(s), "{}"),
  notifyForm: (s) => buildNotifyForm(hostileEvent(s), "{}"),
  editForm: (s) =>
    buildEventForm({
      mode: "edit",
      privateMetadata: "{}",
      zones: ["UTC"],
      values: { title: s, description: s, timezone: "UTC", start: Date.UTC(2030, 0, 1) },
      notes: [],
    }),
  tokenMinted: (s) => buildTokenMinted(hostileToken(s)),
  tokenList: (s) => buildTokenList([hostileToken(s)], Date.UTC(2030, 0, 1)),
  settings: (s) =>
    settingsView({
      settings: { ...DEFAULT_SETTINGS, eventsAppKey: s, relayUsername: s },
      usergroups: [{ id: "S1", handle: s, name: s }],
      meta: {},
      check: { lines: [checkLine(false, "Relay", s), checkLine(true, "Events service", s)] },
    }),
  digestEvery: (s) => {
    const p = emptyPending();
    addNotice(p, { kind: "join", name: s, email: s, instanceId: "i" });
    addNotice(p, { kind: "leave", name: s, instanceId: "i" });
    return { text: digestText("every", p, { present: 1 }, true) };
  },
  digest: (s) => {
    const p = emptyPending();
    addNotice(p, { kind: "join", name: s, email: s, instanceId: "i" });
    return { text: digestText("digest", p, { present: 1 }, true) };
  },
  reminder: (s) => ({ text: reminderText(hostileEvent(s), 10) }),
  candidates: (s) => ({ text: candidatesText(s, [{ eventId: s, title: s }]) }),
  help: (s) => ({ text: helpText(s) }),
  report: (s) => ({
    text: reportText(s, {
      instanceId: s,
      ended: true,
      asOf: 0,
      peak: 1,
      unique: 1,
      presentAtEnd: 0,
      averageMinutes: 1,
      medianMinutes: 1,
      firstJoin: 0,
      lastJoin: 0,
    }),
  }),
  unfurl: (s) => unfurlBlocks({ event: hostileEvent(s), cancelled: false, state: s, present: 1 }),
  notice: (s) => buildNoticeModal("Title", checkLine(false, "Check", s)),
};

describe("every builder escapes what it did not write", () => {
  for (const [name, build] of Object.entries(builders)) {
    it(`${name}: no mention, channel or link made of hostile text`, () => {
      fc.assert(
        fc.property(hostile, (s) => {
          const texts = mrkdwnOf(build(s));
          expect(texts.length).toBeGreaterThan(0);
          expect(injected(texts)).toEqual([]);
        }),
        { numRuns: 150 },
      );
    });
  }

  it("the check itself sees an injection (it can fail)", () => {
    expect(injected(["Q4 <!channel> <https://evil.example|click HACK> <@U0HACKER>"])).toEqual([
      "<!channel>",
      "<https://evil.example|click HACK>",
      "<@U0HACKER>",
    ]);
    expect(injected(["<@U0OMAR0ORG> scheduled &lt;!channel&gt;"])).toEqual([]);
  });
});
