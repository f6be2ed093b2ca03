import { describe, expect, it } from "vitest";
import {
  csvCell,
  type InstanceSnapshot,
  perMinute,
  reportCsv,
  reportFigures,
} from "../../../src/domain/report.ts";
import { chartSvg } from "../../../src/domain/report-chart.ts";
import { endIfQuiet, snapshotOf } from "../../../src/live/report-post.ts";
import { EventLive } from "../../../src/live/state.ts";

const MIN = 60_000;
const T0 = Date.UTC(2026, 10, 23, 15, 0);

function snap(over: Partial<InstanceSnapshot> = {}): InstanceSnapshot {
  return {
    instanceId: "i1",
    state: "IN_EVENT",
    marks: [["IN_EVENT", T0]],
    endedAt: T0 + 20 * MIN,
    attendees: [
      {
        name: "Ann",
        email: "ann@example.com",
        endpointType: "browser",
        sessions: [T0, T0 + 5 * MIN],
      },
      // A lost LEFT: two overlapping sessions of one attendee count once.
      {
        name: "Bob",
        email: "bob@example.com",
        endpointType: "pstn",
        sessions: [T0 + MIN, T0 + 10 * MIN, T0 + 2 * MIN, 0],
      },
      { name: "Cy", endpointType: "browser", sessions: [T0 + 6 * MIN, T0 + 8 * MIN] },
    ],
    ...over,
  };
}

describe("attendance report figures", () => {
  it("counts peak by time (one attendee once), unique, present at the end, average and median", () => {
    const f = reportFigures(snap(), Date.now());
    expect(f.peak).toBe(2);
    expect(f.unique).toBe(3);
    expect(f.presentAtEnd).toBe(1);
    // Ann 5, Bob 9 + 18 = 27, Cy 2: average 34 / 3, median 5.
    expect(f.averageMinutes).toBeCloseTo(34 / 3, 6);
    expect(f.medianMinutes).toBe(5);
    expect([f.firstJoin, f.lastJoin]).toEqual([T0, T0 + 6 * MIN]);
    expect(f.ended).toBe(true);
  });

  it("counts attendees present in each minute, an attendee once", () => {
    const s = perMinute(snap(), Date.now());
    expect(s.start).toBe(T0);
    expect(s.step).toBe(MIN);
    expect(Array.from(s.counts.slice(0, 11))).toEqual([1, 2, 2, 2, 2, 1, 2, 2, 1, 1, 1]);
  });

  it("writes one CSV row per session, e-mails only when shown, formulas defused", () => {
    const hostile = snap({
      attendees: [{ name: "=1+1", email: "@evil", endpointType: "+x", sessions: [T0, T0 + MIN] }],
    });
    const withEmails = reportCsv(hostile, Date.now(), true).split("\r\n");
    expect(withEmails[0]).toBe("attendee,name,email,endpoint,join,leave,minutes");
    expect(withEmails[1]).toBe(
      `1,'=1+1,'@evil,'+x,${new Date(T0).toISOString()},${new Date(T0 + MIN).toISOString()},1.00`,
    );
    const hidden = reportCsv(snap(), Date.now(), false);
    expect(hidden).not.toContain("@");
    expect(hidden.split("\r\n").filter(Boolean)).toHaveLength(5);
    expect(csvCell('a "b", c')).toBe('"a ""b"", c"');
    expect(csvCell("-2")).toBe("'-2");
  });

  it("draws a chart with the state changes and no name or e-mail", async () => {
    const s = snap();
    const svg = await chartSvg(s, perMinute(s, Date.now()));
    expect(svg).toContain("<svg");
    expect(svg).toContain("Live");
    expect(svg).not.toContain("@");
    expect(svg).not.toContain("Ann");
  });

  it("draws in the event's zone and says which; the end is marked even when no mark names it", async () => {
    // T0 is 15:00 UTC, 16:00 in Paris (CET, UTC+01:00).
    const s = snap({ zone: "Europe/Paris" });
    const svg = await chartSvg(s, perMinute(s, Date.now()));
    expect(svg).toContain("Attendees present per minute (Europe/Paris, UTC+01:00)");
    expect(svg).toContain("16:");
    expect(svg).not.toMatch(/>15:\d\d</);
    // Ended (endedAt) with no ENDED mark among the state changes: marked all the same, and the
    // axis reaches it though no attendee was in by then.
    expect(s.marks.some(([m]) => m === "ENDED")).toBe(false);
    expect(svg).toContain(">Ended<");
    const utc = await chartSvg(snap(), perMinute(snap(), Date.now()));
    expect(utc).toContain("(UTC)");
    expect(utc).toContain(">15:");
    const late = snap({
      endedAt: T0 + 90 * MIN,
      marks: [
        ["IN_EVENT", T0],
        ["ENDED", T0 + 90 * MIN],
      ],
    });
    const lateSvg = await chartSvg(late, perMinute(late, Date.now()));
    expect(lateSvg.match(/>Ended</g)).toHaveLength(1);
    expect(lateSvg).toContain(">16:30<");
  });
});

describe("when an instance ends", () => {
  const state = (instanceId: string, s: "NOT_STARTED" | "PREP_EVENT" | "IN_EVENT") =>
    ({ eventId: "e", instanceId, type: "EVENT_STATE", info: { state: s } }) as const;

  it("a later NOT_STARTED ends a started instance; a NOT_STARTED before it began does not", () => {
    const live = new EventLive();
    live.apply(state("a", "NOT_STARTED"), undefined, 1);
    expect(live.current()?.endedAt).toBeUndefined();
    live.apply(state("a", "IN_EVENT"), undefined, 2);
    live.apply(state("a", "NOT_STARTED"), undefined, 3);
    expect(live.current()?.endedAt).toBe(3);
    expect(live.current()?.state).toBe("IN_EVENT");
    expect(snapshotOf(live.current()!).marks).toEqual([
      ["NOT_STARTED", 1],
      ["IN_EVENT", 2],
      ["ENDED", 3],
    ]);
  });

  it("a new instance ends the previous one; ends survive the stored form", () => {
    const live = new EventLive();
    live.apply(state("a", "PREP_EVENT"), undefined, 10);
    live.apply(state("b", "PREP_EVENT"), undefined, 20);
    expect(live.instances.get("a")?.endedAt).toBe(20);
    expect(live.instances.get("b")?.endedAt).toBeUndefined();
    const again = EventLive.from(live.toJSON());
    expect(again.instances.get("a")?.endedAt).toBe(20);
    expect(again.instances.get("a")?.marks).toEqual([
      ["PREP_EVENT", 10],
      ["ENDED", 20],
    ]);
  });

  it("the scheduled end passed with nothing for the quiet period ends it at the later of the two", () => {
    const live = new EventLive();
    live.apply(state("a", "IN_EVENT"), undefined, 1_000);
    const inst = live.current()!;
    expect(endIfQuiet(inst, 5_000, 5_500, 1_000)).toBe(6_000);
    expect(live.current()?.endedAt).toBeUndefined();
    expect(endIfQuiet(inst, 5_000, 6_000, 1_000)).toBeUndefined();
    expect(live.current()?.endedAt).toBe(5_000);
  });
});
