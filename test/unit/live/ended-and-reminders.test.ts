import { describe, expect, it } from "vitest";
import { buildEventCard } from "../../../src/blocks/event-card.ts";
import { buildOrganizerDetails } from "../../../src/blocks/organizer-details.ts";
import { unfurlBlocks } from "../../../src/blocks/unfurl.ts";
import {
  instanceEndedAt,
  nextStart,
  occurrenceEnd,
  quietEndDue,
} from "../../../src/domain/instance-end.ts";
import { REMINDER_HORIZON_MS } from "../../../src/domain/reminders.ts";
import type { LiveSubscription } from "../../../src/domain/subscription.ts";
import { publicEvent } from "../../../src/domain/subscription.ts";
import { reminderTopUp, wantedReminders } from "../../../src/live/reminders.ts";
import type { Event } from "../../../src/upstream/events/schemas.ts";
import { sampleEvent } from "../slack/blocks/fixtures.ts";

const DAY = 86_400_000;
const MIN = 60_000;

function daily(count: number, over: Partial<Event> = {}): Event {
  return sampleEvent({
    timezone: "UTC",
    recurrencePattern: {
      recurrenceType: "DAILY",
      endDate: null,
      recurrenceCount: count,
      frequency: 1,
      daysOfWeekMask: 0,
      dayOfMonth: 0,
      weekOfMonth: "NONE",
    },
    ...over,
  });
}

function subOf(event: Event, mins = [60, 10]): LiveSubscription {
  return {
    team: "T1",
    eventId: event.id,
    channels: ["C1"],
    secretSha256: "x",
    types: ["EVENT_STATE", "ATTENDEE_INFO"],
    noise: "digest",
    event: publicEvent(event),
    reminders: { C1: { mins } },
    createdBy: "U1",
    createdAt: 0,
  } as LiveSubscription;
}

describe("when an instance has ended (domain/instance-end.ts)", () => {
  const t = { state: "IN_EVENT", unique: 3, endedAt: undefined, lastAt: 1_000 };

  it("is what the engine recorded, else the quiet rule: the later of the end and the last message, plus quiet", () => {
    expect(instanceEndedAt({ ...t, endedAt: 500 }, 10_000, 0)).toBe(500);
    expect(quietEndDue(t, 5_000, 1_000)).toBe(6_000);
    expect(instanceEndedAt(t, 5_000, 5_999, 1_000)).toBeUndefined();
    expect(instanceEndedAt(t, 5_000, 6_000, 1_000)).toBe(5_000);
    expect(instanceEndedAt({ ...t, lastAt: 7_000 }, 5_000, 7_999, 1_000)).toBeUndefined();
    expect(instanceEndedAt({ ...t, lastAt: 7_000 }, 5_000, 8_000, 1_000)).toBe(7_000);
  });

  it("never ends an instance nobody heard of, nor one with no scheduled end", () => {
    const silent = { state: undefined, unique: 0, endedAt: undefined, lastAt: 0 };
    expect(instanceEndedAt(silent, 0, 10 ** 12)).toBeUndefined();
    expect(instanceEndedAt(t, undefined, 10 ** 12)).toBeUndefined();
  });

  it("takes the end of the occurrence the instance belongs to, not the series' first", () => {
    const e = daily(10);
    const length = e.end - e.start;
    expect(occurrenceEnd(e, e.start - 30 * MIN)).toBe(e.end);
    // Day 3's broadcast, heard of an hour early or starting late.
    expect(occurrenceEnd(e, e.start + 3 * DAY - 3_600_000)).toBe(e.start + 3 * DAY + length);
    expect(occurrenceEnd(e, e.start + 3 * DAY + 2 * 3_600_000)).toBe(e.start + 3 * DAY + length);
    expect(nextStart(e, e.start + 3 * DAY + 2 * 3_600_000)).toBe(e.start + 4 * DAY);
  });
});

describe("the ended card, unfurl and show", () => {
  const live = { state: "IN_EVENT" as const, present: 33, peak: 40, unique: 40 };

  it("says Ended with when and the final figures, never Live now", () => {
    const endedAt = Date.UTC(2030, 2, 30, 17, 5);
    const card = buildEventCard({ event: sampleEvent(), live: { ...live, endedAt } });
    const text = JSON.stringify(card.blocks);
    expect(text).toContain(`Ended <!date^${endedAt / 1000}^`);
    expect(text).toContain("Final figures: peak *40* · unique *40* · present at the end *33*");
    expect(text).not.toContain("Live now");
    expect(text).not.toContain("Attendees now");
    expect(card.text).toContain("(ended)");
    const next = Date.UTC(2030, 2, 31, 16);
    const series = JSON.stringify(
      buildEventCard({ event: daily(3), live: { ...live, endedAt, next } }).blocks,
    );
    expect(series).toContain(`· next <!date^${next / 1000}^`);
    const unfurl = JSON.stringify(
      unfurlBlocks({
        event: sampleEvent(),
        cancelled: false,
        state: "IN_EVENT",
        present: 33,
        peak: 40,
        unique: 40,
        endedAt,
      }),
    );
    expect(unfurl).toContain("Ended <!date^");
    expect(unfurl).toContain("present at the end *33*");
    expect(unfurl).not.toContain("attendees now");
    const show = JSON.stringify(
      buildOrganizerDetails(sampleEvent(), "Here", { live: { state: "IN_EVENT", endedAt } }),
    );
    expect(show).toContain("Ended <!date^");
  });

  it("shows only the staff roles the event has; none at all says nothing", () => {
    const prep = {
      ...live,
      state: "PREP_EVENT" as const,
      staffIn: { panelists: [], moderators: ["Kei"] },
    };
    const both = JSON.stringify(buildEventCard({ event: sampleEvent(), live: prep }).blocks);
    expect(both).toContain("Panelists in:* none yet");
    expect(both).toContain("Moderators in:* Kei");
    const noPanel = JSON.stringify(
      buildEventCard({ event: sampleEvent({ panelists: [] }), live: prep }).blocks,
    );
    expect(noPanel).not.toContain("Panelists in");
    expect(noPanel).toContain("Moderators in:* Kei");
    const nobody = buildEventCard({
      event: sampleEvent({ panelists: [], moderators: [] }),
      live: prep,
    }).blocks;
    expect(JSON.stringify(nobody)).not.toContain("card_staff");
  });

  it("shows the description escaped and cut on the card, longer in /onair show", () => {
    const description = `Agenda <!channel> & <@U123>\n\n\n\nQ&A  \n${"x".repeat(3000)}`;
    const card = buildEventCard({ event: sampleEvent({ description }) }).blocks;
    const block = card.find((b) => "block_id" in b && b.block_id === "card_description");
    const text = JSON.stringify(block);
    expect(text).toContain("Agenda &lt;!channel&gt; &amp; &lt;@U123&gt;\\n\\nQ&amp;A\\n");
    expect(text).not.toContain("<!channel>");
    const shown = (block as { text: { text: string } }).text.text;
    expect(Array.from(shown).length).toBeLessThanOrEqual(500);
    expect(shown.endsWith("…")).toBe(true);
    const show = buildOrganizerDetails(sampleEvent({ description }), "Here", { description: true });
    const details = show.blocks.find(
      (b) => "block_id" in b && b.block_id === "details_description",
    );
    const long = (details as { text: { text: string } }).text.text;
    expect(long.length).toBeGreaterThan(500);
    expect(long.length).toBeLessThanOrEqual(2000);
    expect(
      JSON.stringify(buildEventCard({ event: sampleEvent({ description: "  \n " }) })),
    ).not.toContain("card_description");
  });
});

describe("reminders of a daily series (Slack's 120-day horizon)", () => {
  it("are wanted for every occurrence within the horizon and topped up as days pass", () => {
    const now = Date.UTC(2030, 0, 1, 12);
    const start = now + 3 * 3_600_000;
    const e = daily(130, { start, end: start + 3_600_000 });
    const sub = subOf(e);
    const wanted = wantedReminders(sub, "C1", now);
    const inHorizon = (at: number) => at >= now + MIN && at <= now + REMINDER_HORIZON_MS;
    let expected = 0;
    for (let i = 0; i < 130; i++) {
      for (const m of [60, 10]) if (inHorizon(start + i * DAY - m * MIN)) expected++;
    }
    expect(wanted).toHaveLength(expected);
    expect(expected).toBeLessThan(260);
    expect(expected).toBeGreaterThan(230);
    expect(new Set(wanted.map((w) => w.key)).size).toBe(wanted.length);
    // Each names its own occurrence's start.
    const day5 = Math.floor((start + 5 * DAY) / 1000);
    expect(wanted.find((w) => w.postAt === day5 - 600)?.text).toContain(`<!date^${day5}^`);

    // The lane wakes when the next one comes within the horizon, and then it is wanted.
    const topUp = reminderTopUp(sub, "C1", now);
    expect(topUp?.kind).toBe("wait");
    const at = topUp?.until ?? 0;
    expect(at).toBeGreaterThan(now);
    expect(at).toBeLessThanOrEqual(now + DAY);
    const later = wantedReminders(sub, "C1", at);
    expect(later.length).toBeGreaterThan(wanted.filter((w) => w.postAt * 1000 >= at + MIN).length);
    // None beyond the series' last occurrence: no more waking.
    expect(reminderTopUp(sub, "C1", start + 20 * DAY)).toBeUndefined();
    expect(reminderTopUp(subOf(sampleEvent()), "C1", now)).toBeUndefined();
  });

  it("are none for a cancelled or gone event, or a channel not notified", () => {
    const e = daily(3, { start: Date.UTC(2030, 0, 2), end: Date.UTC(2030, 0, 2, 1) });
    const now = Date.UTC(2030, 0, 1);
    expect(wantedReminders(subOf(e), "C1", now)).toHaveLength(6);
    expect(wantedReminders({ ...subOf(e), cancelled: true }, "C1", now)).toEqual([]);
    expect(wantedReminders({ ...subOf(e), gone: true }, "C1", now)).toEqual([]);
    expect(wantedReminders(subOf(e), "C2", now)).toEqual([]);
  });
});
