import { describe, expect, it } from "vitest";
import { CallsUnderWay, untilOver } from "../../../src/live/under-way.ts";

/** A call under way, settled when the test says. */
function call(): { promise: Promise<number>; settle: () => void } {
  let settle = () => {};
  const promise = new Promise<number>((resolve) => {
    settle = () => resolve(0);
  });
  return { promise, settle };
}

const flush = () => new Promise((r) => setImmediate(r));

describe("calls a dropped run left under way", () => {
  it("are handed to the event's next run once, and kept for no other event", () => {
    const kept = new CallsUnderWay();
    const a = call();
    expect(kept.leave("T:e1", new Map([["C1", a.promise]]))).toBe(true);
    expect(kept.take("T:e2")).toBeUndefined();
    expect([...(kept.take("T:e1") ?? [])]).toEqual([["C1", a.promise]]);
    // Handed over: the run that took them hands them on itself if it is dropped in turn.
    expect(kept.take("T:e1")).toBeUndefined();
  });

  it("are nothing to keep when none is under way", () => {
    const kept = new CallsUnderWay();
    expect(kept.leave("T:e1", new Map())).toBe(false);
    expect(kept.size).toBe(0);
  });

  it("left twice for one event are kept together, a channel's newer call replacing the older", () => {
    const kept = new CallsUnderWay();
    const older = call();
    const other = call();
    const newer = call();
    kept.leave(
      "T:e1",
      new Map([
        ["C1", older.promise],
        ["C2", other.promise],
      ]),
    );
    kept.leave("T:e1", new Map([["C1", newer.promise]]));
    const taken = kept.take("T:e1");
    expect(taken?.get("C1")).toBe(newer.promise);
    expect(taken?.get("C2")).toBe(other.promise);
  });

  it("are forgotten once every one of them has settled, and not before", async () => {
    const kept = new CallsUnderWay();
    const a = call();
    const b = call();
    kept.leave(
      "T:e1",
      new Map([
        ["C1", a.promise],
        ["C2", b.promise],
      ]),
    );
    a.settle();
    await flush();
    expect(kept.size).toBe(1);
    expect(kept.byEventCalls().get("T:e1")).toHaveLength(2);
    b.settle();
    await flush();
    expect(kept.size).toBe(0);
    expect(kept.take("T:e1")).toBeUndefined();
  });

  it("are kept until the pause the dropped lane took after them is over", async () => {
    const kept = new CallsUnderWay();
    const pausedUntil = Date.now() + 500;
    kept.leave("T:e1", new Map([["C1", Promise.resolve(pausedUntil)]]));
    await flush();
    // Settled, but its pause holds the channel back: a run taken up now must still wait it out.
    expect(kept.has("T:e1")).toBe(true);
    await new Promise((r) => setTimeout(r, pausedUntil + 30 - Date.now()));
    expect(kept.has("T:e1")).toBe(false);
  });

  it("left again before the first set settled are not forgotten with it", async () => {
    const kept = new CallsUnderWay();
    const first = call();
    const second = call();
    kept.leave("T:e1", new Map([["C1", first.promise]]));
    kept.leave("T:e1", new Map([["C2", second.promise]]));
    first.settle();
    await flush();
    // The first set settled, but the event's kept calls are the merged set: still one under way.
    expect(kept.take("T:e1")?.get("C2")).toBe(second.promise);
  });

  it("inherited by a run, are kept in its own copy until settled and their pause is over", async () => {
    const answered = call();
    const pausedUntil = Date.now() + 500;
    const mine = untilOver(
      new Map([
        ["C1", answered.promise],
        ["C2", Promise.resolve(pausedUntil)],
      ]),
    );
    await flush();
    // C1 still under way; C2 settled, its pause not over: a run dropped now hands both on.
    expect([...mine.keys()].sort()).toEqual(["C1", "C2"]);
    answered.settle();
    await flush();
    expect([...mine.keys()]).toEqual(["C2"]);
    await new Promise((r) => setTimeout(r, pausedUntil + 30 - Date.now()));
    expect(mine.size).toBe(0);
  });
});
