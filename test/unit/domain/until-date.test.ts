import { describe, expect, it } from "vitest";
import { recurrencePreview } from "../../../src/blocks/recurrence.ts";
import {
  recurrenceOf,
  untilCount,
  validateDraft,
  valuesFromEvent,
} from "../../../src/domain/event-draft.ts";
import { zonedToUtc } from "../../../src/domain/time.ts";
import type { Event } from "../../../src/upstream/events/schemas.ts";

const ZONE = "Europe/Paris";
const HOUR = 3_600_000;
// 23:30 in Paris on 2030-03-29: the day in UTC is still the 29th, the zone's day is what counts.
const START = zonedToUtc({ year: 2030, month: 3, day: 29, hour: 23, minute: 30, second: 0 }, ZONE);
const draft = {
  recurrence: "DAILY" as const,
  start: START,
  end: START + HOUR,
  timezone: ZONE,
  frequency: 1,
  until: "2030-04-02",
};

const { until: _until, ...withoutUntil } = draft;

describe("a daily series until a date", () => {
  it("counts its occurrences by the event's zone, across a daylight-saving change", () => {
    expect(untilCount(draft)).toBe(5);
    expect(untilCount({ ...draft, frequency: 2 })).toBe(3);
    expect(untilCount({ ...draft, until: "2030-03-28" })).toBe(0);
  });

  it("ends the pattern when its last occurrence ends; no count", () => {
    const p = recurrenceOf(draft);
    const lastStart = zonedToUtc(
      { year: 2030, month: 4, day: 2, hour: 23, minute: 30, second: 0 },
      ZONE,
    );
    expect(p).toMatchObject({
      recurrenceType: "DAILY",
      recurrenceCount: 0,
      endDate: lastStart + HOUR,
    });
  });

  it("is read back from the service's pattern as the same date", () => {
    const p = recurrenceOf(draft);
    const back = valuesFromEvent({
      title: "t",
      description: "",
      start: START,
      end: START + HOUR,
      timezone: ZONE,
      recurrencePattern: p,
    } as unknown as Event);
    expect(back).toMatchObject({ recurrence: "DAILY", until: "2030-04-02", frequency: 1 });
    expect(back.count).toBeUndefined();
  });

  it("previews its dates and says how many more", () => {
    const text = recurrencePreview({ ...draft, until: "2030-04-30" }, 3);
    expect(text.match(/•/g)).toHaveLength(3);
    expect(text).toContain("…and 30 more");
  });

  it("inline errors: both ends, none, bad date", () => {
    const now = START - 24 * HOUR;
    expect(validateDraft({ ...draft, title: "x", count: 3 }, { now }).until).toMatch(/either/);
    expect(validateDraft({ ...withoutUntil, title: "x" }, { now }).count).toMatch(/how many times/);
    expect(validateDraft({ ...draft, title: "x", until: "2030-02-30" }, { now }).until).toMatch(
      /Pick a date/,
    );
    expect(validateDraft({ ...draft, title: "x" }, { now })).toEqual({});
  });
});
