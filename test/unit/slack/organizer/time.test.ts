import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  dailyOccurrences,
  offsetLabel,
  wallTime,
  zonedToUtc,
} from "../../../../src/domain/time.ts";

describe("zone-aware daily occurrences", () => {
  it("keeps 18:00 Paris across the March change (UTC instants move by an hour)", () => {
    const start = Date.UTC(2030, 2, 29, 17, 0); // Fri 29 Mar 2030 18:00 CET
    const list = dailyOccurrences(start, "Europe/Paris", 1, 4);
    expect(list.map((ms) => new Date(ms).toISOString())).toEqual([
      "2030-03-29T17:00:00.000Z",
      "2030-03-30T17:00:00.000Z",
      "2030-03-31T16:00:00.000Z", // CEST from the last Sunday of March
      "2030-04-01T16:00:00.000Z",
    ]);
    expect(list.map((ms) => wallTime(ms, "Europe/Paris").hour)).toEqual([18, 18, 18, 18]);
  });

  it("keeps 09:30 New York across the November change, every other day", () => {
    const start = Date.UTC(2030, 10, 1, 13, 30); // Fri 1 Nov 2030 09:30 EDT
    const list = dailyOccurrences(start, "America/New_York", 2, 3);
    expect(list.map((ms) => new Date(ms).toISOString())).toEqual([
      "2030-11-01T13:30:00.000Z",
      "2030-11-03T14:30:00.000Z", // EST from the first Sunday of November
      "2030-11-05T14:30:00.000Z",
    ]);
  });

  it("stops at the limit and never needs the server's zone", () => {
    expect(dailyOccurrences(Date.UTC(2030, 0, 1), "Asia/Tokyo", 1, 365, 5)).toHaveLength(5);
    expect(offsetLabel(Date.UTC(2030, 0, 1), "Asia/Kolkata")).toBe("UTC+05:30");
  });

  it("zonedToUtc inverts wallTime for any instant and zone (outside skipped hours)", () => {
    const zones = ["Europe/Paris", "America/New_York", "Australia/Sydney", "Asia/Kathmandu", "UTC"];
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(2020, 0, 1) / 60000, max: Date.UTC(2040, 0, 1) / 60000 }),
        fc.constantFrom(...zones),
        (minute, zone) => {
          const ms = minute * 60000;
          const back = zonedToUtc(wallTime(ms, zone), zone);
          // A repeated autumn hour maps to its first occurrence: same wall time either way.
          expect(wallTime(back, zone)).toEqual(wallTime(ms, zone));
        },
      ),
      { numRuns: 300 },
    );
  });
});
