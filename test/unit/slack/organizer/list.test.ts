import { describe, expect, it } from "vitest";
import { nextStart } from "../../../../src/domain/list.ts";
import { sampleEvent } from "../blocks/fixtures.ts";

const DAY = 86_400_000;
const start = Date.UTC(2030, 2, 29, 17); // 18:00 Paris, two days before the March change
const daily = (count: number, frequency = 1) => ({
  recurrenceType: "DAILY",
  endDate: null,
  recurrenceCount: count,
  frequency,
  daysOfWeekMask: 0,
  dayOfMonth: 0,
  weekOfMonth: "NONE",
});

describe("nextStart", () => {
  it("a one-off event: its start until it ends, then nothing", () => {
    const e = sampleEvent({ start, end: start + 3_600_000 });
    expect(nextStart(e, start - DAY)).toBe(start);
    expect(nextStart(e, start + 1_800_000)).toBe(start); // running now
    expect(nextStart(e, start + 2 * 3_600_000)).toBeUndefined();
  });

  it("a running daily series: the next occurrence, in the event's zone across the DST change", () => {
    const e = sampleEvent({
      start,
      end: start + 3_600_000,
      timezone: "Europe/Paris",
      recurrencePattern: daily(5),
    });
    // After the third day's session: the fourth, at 18:00 CEST = 16:00 UTC.
    expect(nextStart(e, Date.UTC(2030, 2, 31, 18))).toBe(Date.UTC(2030, 3, 1, 16));
    expect(nextStart(e, Date.UTC(2030, 3, 10))).toBeUndefined();
  });
});
