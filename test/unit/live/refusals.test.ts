import { describe, expect, it } from "vitest";
import type { OutboxEntry } from "../../../src/live/outbox-entry.ts";
import { Refusals } from "../../../src/live/refusals.ts";
import type { HeldEvent } from "../../../src/live/set-aside.ts";

/**
 * Refusals' two decisions on held items the live model threw on, with no store (neither reads
 * one): which held items this process applies now (`pick`), and which of those refused again it
 * writes again with its own code (`rewrite`). The engine's tests (test/e2e/live-refused*.ts) show
 * the same through the store and a restart; these pin each rule alone.
 */

const STARTED = 1_000_000;
const DRIFT = 5_000;

function refusals(build = "new") {
  // pick and rewrite read neither the held records nor the logger.
  return new Refusals(undefined as never, undefined as never, DRIFT, build, STARTED);
}

function entry(id: string): OutboxEntry {
  return { id, kind: "unreadable" } as unknown as OutboxEntry;
}

function heldEvent(refused: HeldEvent["refused"], ids = ["a", "b", "c"]): HeldEvent {
  return { team: "T1", eventId: "E1", entries: ids.map(entry), refused };
}

const ids = (xs: readonly OutboxEntry[]) => xs.map((x) => x.id);

describe("Refusals.pick", () => {
  it("applies an item set aside unread, and one refused before this process started", () => {
    const r = refusals();
    const e = heldEvent(new Map([["b", { at: STARTED - DRIFT - 1, build: "new" }]]));
    expect(ids(r.pick(e).entries)).toEqual(["a", "b", "c"]);
  });

  it("leaves an item this code refused since it started (within the clocks' drift too)", () => {
    const r = refusals();
    const e = heldEvent(
      new Map([
        ["a", { at: STARTED + 10, build: "new" }],
        ["b", { at: STARTED - DRIFT + 1 }],
      ]),
    );
    expect(ids(r.pick(e).entries)).toEqual(["c"]);
  });

  it("applies an item other code refused, however recently (a rolling deploy's old instance)", () => {
    const r = refusals("new");
    const e = heldEvent(new Map([["a", { at: STARTED + 10, build: "old" }]]));
    expect(ids(r.pick(e).entries)).toEqual(["a", "b", "c"]);
  });

  it("tries each item once; untry gives them back (the store failed: nothing was tried)", () => {
    const r = refusals();
    const e = heldEvent(new Map([["b", { at: STARTED - DRIFT - 1 }]]));
    const first = r.pick(e);
    expect(ids(r.pick(e).entries)).toEqual([]);
    first.untry(true);
    // Only the items that were not refused are given back with onlyUnrefused.
    expect(ids(r.pick(e).entries)).toEqual(["a", "c"]);
    first.untry();
    expect(ids(r.pick(e).entries)).toEqual(["a", "b", "c"]);
  });
});

describe("Refusals.rewrite", () => {
  it("writes again what other code, or no code, refused; keeps this code's first record", () => {
    const r = refusals("new");
    const before: HeldEvent["refused"] = new Map([
      ["mine", { at: 1, build: "new" }],
      ["theirs", { at: 2, build: "old" }],
      ["older", { at: 3 }],
    ]);
    const again = new Map([
      ["mine", "boom"],
      ["theirs", "boom"],
      ["older", "boom"],
      ["unread", "boom"],
    ]);
    expect([...r.rewrite(before, again).keys()].sort()).toEqual(["older", "theirs", "unread"]);
    expect(r.rewrite(before, again).get("theirs")).toBe("boom");
  });

  it("writes nothing when nothing was refused again", () => {
    const r = refusals("new");
    expect(r.rewrite(new Map([["a", { at: 1, build: "old" }]]), new Map()).size).toBe(0);
  });
});
