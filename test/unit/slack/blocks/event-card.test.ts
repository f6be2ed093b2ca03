import { validateBlocks } from "@onair/slack-emulator";
import { describe, expect, it } from "vitest";
import { buildEventCard } from "../../../../src/blocks/event-card.ts";
import { CARD_ACTIONS } from "../../../../src/ids.ts";
import { sampleEvent } from "./fixtures.ts";

function actionIds(blocks: unknown[]): string[] {
  return JSON.stringify(blocks).match(/onair_card_[a-z]+/g) ?? [];
}

describe("buildEventCard", () => {
  it("shows the public facts, a <!date> time and the four buttons valued with the event id", () => {
    const card = buildEventCard({ event: sampleEvent() });
    expect(validateBlocks(card.blocks).messages).toEqual([]);
    const json = JSON.stringify(card.blocks);
    expect(json).toContain("Quarterly town hall");
    expect(json).toContain(`<!date^${Date.UTC(2030, 2, 30, 16, 0) / 1000}^`);
    expect(json).toContain("https://live.example.com/join/evt-1");
    expect(json).toContain("Not started yet");
    expect(actionIds(card.blocks)).toEqual(Object.values(CARD_ACTIONS));
    expect(json.match(/"value":"evt-1"/g)).toHaveLength(4);
    expect(card.text).toContain("Quarterly town hall");
  });

  it("never carries organizer-only details", () => {
    const json = JSON.stringify(buildEventCard({ event: sampleEvent() }));
    for (const secret of [
      "SECRETMOD",
      "SECRETPAN",
      "PASS-PARTICIPANT-9",
      "PASS-ATTENDEE-8",
      "555 0100",
    ]) {
      expect(json).not.toContain(secret);
    }
  });

  it("shows live figures and, during PREP_EVENT, the staff already in", () => {
    const card = buildEventCard({
      event: sampleEvent(),
      live: {
        state: "PREP_EVENT",
        present: 3,
        peak: 5,
        unique: 7,
        staffIn: { panelists: ["Omar"], moderators: [] },
      },
      noise: "digest",
    });
    const json = JSON.stringify(card.blocks);
    expect(json).toContain("now *3* · peak *5* · unique *7*");
    expect(json).toContain("*Panelists in:* Omar");
    expect(json).toContain("*Moderators in:* none yet");
    expect(json).toContain("Getting ready");
    expect(validateBlocks(card.blocks).ok).toBe(true);
  });

  it("marks a cancelled event and keeps no button", () => {
    const card = buildEventCard({ event: sampleEvent(), cancelled: true });
    expect(JSON.stringify(card.blocks)).toContain("Cancelled");
    expect(actionIds(card.blocks)).toEqual([]);
    expect(card.text).toContain("cancelled");
    expect(validateBlocks(card.blocks).ok).toBe(true);
  });

  it("marks a gone event in words, with no figures, join link or button", () => {
    const card = buildEventCard({
      event: sampleEvent(),
      gone: true,
      live: { state: "IN_EVENT", present: 254, peak: 254, unique: 254 },
    });
    const json = JSON.stringify(card.blocks);
    expect(json).toContain("Gone — the live events service no longer has this event.");
    expect(json).not.toContain("Live now");
    expect(json).not.toContain("254");
    expect(json).not.toContain("Join as an attendee");
    expect(actionIds(card.blocks)).toEqual([]);
    expect(card.text).toContain("(gone)");
  });

  it("describes a DAILY recurrence in words", () => {
    const card = buildEventCard({
      event: sampleEvent({
        recurrencePattern: {
          recurrenceType: "DAILY",
          endDate: null,
          recurrenceCount: 5,
          frequency: 2,
          daysOfWeekMask: 0,
          dayOfMonth: 0,
          weekOfMonth: "NONE",
        },
      }),
    });
    expect(JSON.stringify(card.blocks)).toContain("Every 2 days, 5 times");
  });

  it("stays valid with a 10,000-character title and 500 names in the staff list, with a note", () => {
    const names = Array.from({ length: 500 }, (_, i) => `Panelist number ${i} <@U${i}>`);
    const card = buildEventCard({
      event: sampleEvent({ title: "T&<".repeat(3400) }),
      live: {
        state: "PREP_EVENT",
        present: 1,
        peak: 1,
        unique: 1,
        staffIn: { panelists: names, moderators: names },
      },
    });
    expect(validateBlocks(card.blocks).messages).toEqual([]);
    expect(JSON.stringify(card.blocks)).toContain("(500 in all)");
    expect(JSON.stringify(card.blocks)).not.toContain("<@U1>");
  });
});
