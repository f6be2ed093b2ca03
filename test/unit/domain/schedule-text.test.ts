import { describe, expect, it } from "vitest";
import { titleMatches } from "../../../src/domain/resolve.ts";
import { readScheduleText } from "../../../src/domain/schedule-text.ts";
import { zonedToUtc } from "../../../src/domain/time.ts";

const ZONE = "America/New_York";
// Wednesday 2030-03-06, 17:20 in New York.
const NOW = zonedToUtc({ year: 2030, month: 3, day: 6, hour: 17, minute: 20, second: 0 }, ZONE);
const NEXT = zonedToUtc({ year: 2030, month: 3, day: 6, hour: 18, minute: 0, second: 0 }, ZONE);
const at = (day: number, hour: number, minute = 0) =>
  zonedToUtc({ year: 2030, month: 3, day, hour, minute, second: 0 }, ZONE);
const read = (text: string) => readScheduleText(text, ZONE, NOW, NEXT);

describe("readScheduleText", () => {
  it("reads a day and a time at the front, the rest is the title", () => {
    expect(read("tomorrow 3pm Demo")).toEqual({ title: "Demo", start: at(7, 15) });
    expect(read("3pm tomorrow Demo day")).toEqual({ title: "Demo day", start: at(7, 15) });
    expect(read("fri at 9:30 am Board sync")).toEqual({ title: "Board sync", start: at(8, 9, 30) });
    expect(read("2030-03-29 18:00 Launch")).toEqual({ title: "Launch", start: at(29, 18) });
    expect(read("on Monday 10am Retro")).toEqual({ title: "Retro", start: at(11, 10) });
  });

  it("a time alone is today's, or tomorrow's once passed; a day alone keeps the default hour", () => {
    expect(read("6pm Standup")).toEqual({ title: "Standup", start: at(6, 18) });
    expect(read("9am Standup")).toEqual({ title: "Standup", start: at(7, 9) });
    expect(read("friday Standup")).toEqual({ title: "Standup", start: at(8, 18) });
  });

  it("leaves words that are no day or time to the title", () => {
    expect(read("3 things to know")).toEqual({ title: "3 things to know" });
    expect(read("Monthly all hands")).toEqual({ title: "Monthly all hands" });
    expect(read("Wednesday")).toEqual({ start: at(6, 18) });
    expect(read("13pm Party")).toEqual({ title: "13pm Party" });
    expect(read("")).toEqual({});
  });
});

describe("titleMatches", () => {
  const records = [
    { id: 1, title: "Quarterly town hall" },
    { id: 2, title: "Town hall rehearsal" },
    { id: 3, title: "Design review" },
  ];
  const ids = (q: string) => titleMatches(records, q).map((r) => r.id);

  it("exact, then the start of a title, then every word starting a word anywhere", () => {
    expect(ids("design review")).toEqual([3]);
    expect(ids("town hall")).toEqual([2]);
    expect(ids("quarterly hall")).toEqual([1]);
    expect(ids("hall")).toEqual([1, 2]);
    expect(ids("re")).toEqual([2, 3]);
    expect(ids("rev")).toEqual([3]);
    expect(ids("own hall")).toEqual([]);
    expect(ids("   ")).toEqual([]);
  });
});
