import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it, vi } from "vitest";
import { codeBuild } from "../../src/build-id.ts";
import { LiveEngine } from "../../src/live/engine.ts";
import { heldRepo } from "../../src/live/set-aside.ts";
import { EventLive } from "../../src/live/state.ts";
import { createMetrics } from "../../src/metrics.ts";
import { createCipher, type Store } from "../../src/store/index.ts";
import { describeBackends, storesOfEachTest } from "../helpers/backends.ts";
import { eventually } from "../helpers/live-fixtures.ts";
import { capturedLogs } from "../helpers/log-lines.ts";
import { engineSuite, joinItem, subscribeEvent } from "../helpers/outbox-items.ts";

/**
 * An item the live model throws on is left out, set aside with why, and the event's other items
 * and card go on; no half-applied model is saved; a fault of the event's own (every item throws)
 * trips the breaker instead; a process with the fix applies what was set aside. On a real SQLite
 * file, with the real engine.
 *
 * No message that reads makes the model throw: the throw stands in for a bug. The model's
 * `apply` is wrapped (not replaced): the real one runs first and changes the model, then the
 * wrapper throws, as a bug halfway through would leave it.
 */

const realApply = EventLive.prototype.apply;
/** Calls of the real apply for each attendee name, bug or not. */
const applied = new Map<string, number>();

/** The model throws, after changing itself, on the messages of the attendees named. */
function bugOn(names: (name: string) => boolean) {
  return vi.spyOn(EventLive.prototype, "apply").mockImplementation(function (
    this: EventLive,
    ...args: Parameters<EventLive["apply"]>
  ) {
    const result = realApply.apply(this, args);
    const msg = args[0];
    if (msg.type === "ATTENDEE_INFO") {
      applied.set(msg.info.name, (applied.get(msg.info.name) ?? 0) + 1);
      if (names(msg.info.name)) throw new TypeError(`no seat for ${msg.info.name}`);
    }
    return result;
  });
}

/** Attendee `i` of `eventId` leaving. */
function leftItem(eventId: string, i: number) {
  const j = joinItem(eventId, i);
  return {
    ...j,
    receivedAt: j.receivedAt + 100,
    message: { ...j.message, info: { ...j.message.info, infoType: "LEFT", leaveTime: 9_000 + i } },
  };
}

/**
 * Counts the engine's sweeps for held items (observed, not replaced): `after(n)` resolves once
 * `n` more have run, so a test that something did not happen waits for the sweeps that would
 * have done it, not for a time.
 */
function sweeps() {
  const spy = vi.spyOn(
    LiveEngine.prototype as unknown as { replayHeld(now: number): Promise<void> },
    "replayHeld",
  );
  return {
    async after(n: number) {
      const from = spy.mock.calls.length;
      await eventually(
        async () => {
          const done = spy.mock.results.slice(from + 1, from + n + 1);
          if (done.length < n) return undefined;
          for (const r of done) await r.value;
          return true;
        },
        `${n} sweeps`,
        5_000,
      );
    },
  };
}

describe("an outbox item the live model throws on", () => {
  const { logger, lines } = capturedLogs("info");
  const { suite, start } = engineSuite("refused", logger, {
    pollMs: 20,
    maxPollMs: 50,
    minTurnMs: 10,
    // Processes here start milliseconds apart, on one clock.
    driftMs: 0,
  });
  afterEach(() => {
    vi.restoreAllMocks();
    lines.length = 0;
    applied.clear();
  });
  const held = () => suite.store.repository(heldRepo);
  const outboxOf = (eventId: string) => suite.store.outbox.listEvent("T1", eventId);
  const drained = (eventId: string) =>
    eventually(
      async () => ((await outboxOf(eventId)).length === 0 ? true : undefined),
      `${eventId}'s items drained`,
      5_000,
    );
  const logged = (msg: string) => lines.filter((l) => String(l.msg).includes(msg));
  /** The event's figures as saved (not the run's memory): what a restart would read. */
  const saved = async (eventId: string) => {
    const e = suite.engine;
    if (!e) throw new Error("no engine");
    const inst = (await e.loadLive("T1", eventId)).live.current();
    return inst && { unique: inst.unique, present: inst.present, joins: inst.joins };
  };

  it("is left out and set aside with why; the batch's other items are applied whole, and later ones go on", async () => {
    await subscribeEvent(suite.store, "E1");
    bugOn((name) => name === "Attendee 2");
    const ids = [];
    for (const item of [
      joinItem("E1", 1),
      joinItem("E1", 2),
      joinItem("E1", 3),
      leftItem("E1", 1),
    ]) {
      ids.push(await suite.store.outbox.put(item));
    }
    start();
    await drained("E1");
    // Attendee 2's join changed the model before the throw: that model was dropped, not saved.
    expect(await saved("E1")).toEqual({ unique: 2, present: 1, joins: 2 });
    const kept = await held().list("T1:E1:");
    expect(kept.map((k) => k.id)).toEqual([ids[1]]);
    expect(kept[0]?.value.item).toEqual(joinItem("E1", 2));
    expect(kept[0]?.value.why).toBe("TypeError: no seat for Attendee 2");
    // With the code that threw, for an instance of other code to try it (a rolling deploy).
    expect(kept[0]?.value.build).toBe(codeBuild());
    const said = logged("the live model threw on an outbox item");
    expect(said).toHaveLength(1);
    expect(said[0]).toMatchObject({ level: "error", event: "E1", item: ids[1] });
    expect(logged("an event's turn failed")).toEqual([]);
    // Said once, as refused: not also as an item this version does not read.
    expect(logged("whose message this version does not read")).toEqual([]);
    // The event goes on.
    await suite.store.outbox.put(joinItem("E1", 4));
    await drained("E1");
    expect(await saved("E1")).toEqual({ unique: 3, present: 2, joins: 3 });
    expect(applied.get("Attendee 2")).toBe(1);
  });

  it("is tried again once by the next process, and applied by one with the fix", async () => {
    await subscribeEvent(suite.store, "E2");
    bugOn((name) => name === "Attendee 5");
    const swept = sweeps();
    await suite.store.outbox.put(joinItem("E2", 5));
    await suite.store.outbox.put(joinItem("E2", 6));
    start({ sweepMs: 100 });
    await drained("E2");
    expect((await held().list("T1:E2:")).map((k) => k.value.why)).toEqual([
      "TypeError: no seat for Attendee 5",
    ]);
    // This process's sweeps leave it alone: refused here already.
    await swept.after(3);
    expect(applied.get("Attendee 5")).toBe(1);
    await suite.engine?.stop();

    // The next process, the bug still in: tries it once, keeps it, and says so.
    lines.length = 0;
    start({ sweepMs: 100 });
    await eventually(
      () => (applied.get("Attendee 5") === 2 ? true : undefined),
      "the next process tried it",
      5_000,
    );
    await swept.after(3);
    expect(applied.get("Attendee 5")).toBe(2);
    expect(await held().list("T1:E2:")).toHaveLength(1);
    expect(logged("left out and kept set aside")).toHaveLength(1);
    expect(logged("applied outbox items set aside earlier")).toEqual([]);
    expect(await saved("E2")).toEqual({ unique: 1, present: 1, joins: 1 });
    await suite.engine?.stop();

    // A process with the fix applies it and removes it.
    vi.restoreAllMocks();
    lines.length = 0;
    start({ sweepMs: 100 });
    await eventually(
      async () => ((await held().list("T1:E2:")).length === 0 ? true : undefined),
      "the fixed process applied it",
      5_000,
    );
    expect(await saved("E2")).toEqual({ unique: 2, present: 2, joins: 2 });
    expect(logged("applied outbox items set aside earlier")[0]).toMatchObject({
      event: "E2",
      applied: 1,
    });
  });

  it("on every item is the event's fault: nothing set aside or saved half, the items stay, and go in once fixed", async () => {
    await subscribeEvent(suite.store, "E3");
    bugOn(() => true);
    for (let i = 10; i < 15; i++) await suite.store.outbox.put(joinItem("E3", i));
    start();
    await eventually(
      () => (logged("an event's turn failed").length > 0 ? true : undefined),
      "the event's turn failed",
      5_000,
    );
    const failed = logged("an event's turn failed")[0];
    expect(failed).toMatchObject({ event: "E3", failures: 1 });
    expect(String((failed?.err as { message?: string })?.message)).toContain("more than 3 items");
    // Three left out in turn, the fourth throw trips the breaker: the fifth is never reached.
    for (const i of [10, 11, 12, 13]) expect(applied.get(`Attendee ${i}`)).toBeGreaterThan(0);
    expect(applied.get("Attendee 14")).toBeUndefined();
    expect(await held().list("T1:E3:")).toEqual([]);
    expect(await outboxOf("E3")).toHaveLength(5);
    expect(await saved("E3")).toBeUndefined();
    expect(logged("the live model threw on an outbox item")).toEqual([]);
    // Fixed (as a deploy would): after the back-off the items go in, all of them.
    vi.restoreAllMocks();
    await drained("E3");
    expect(await saved("E3")).toEqual({ unique: 5, present: 5, joins: 5 });
    expect(await held().list("T1:E3:")).toEqual([]);
  });

  it("on every item, one a turn, is the event's fault too: three are set aside, then the breaker", async () => {
    await subscribeEvent(suite.store, "E4");
    bugOn(() => true);
    start();
    for (let i = 20; i < 23; i++) {
      await suite.store.outbox.put(joinItem("E4", i));
      await drained("E4");
    }
    expect(await held().list("T1:E4:")).toHaveLength(3);
    await suite.store.outbox.put(joinItem("E4", 23));
    await eventually(
      () => (logged("an event's turn failed").length > 0 ? true : undefined),
      "the event's turn failed",
      5_000,
    );
    expect(
      String((logged("an event's turn failed")[0]?.err as { message?: string })?.message),
    ).toContain("within 10 minutes");
    expect(await outboxOf("E4")).toHaveLength(1);
    expect(await held().list("T1:E4:")).toHaveLength(3);
    expect(logged("the live model threw on an outbox item")).toHaveLength(3);
  });

  it("is left alone by an instance that was running when it was set aside", async () => {
    await subscribeEvent(suite.store, "E5");
    bugOn(() => false);
    const swept = sweeps();
    start({ sweepMs: 100 });
    // Set aside by another instance of this version, after this one started.
    const id = "T1:E5:0000000000-0000-000000/0";
    await held().put(id, { item: joinItem("E5", 30), at: Date.now(), why: "TypeError: x" });
    await swept.after(3);
    expect(applied.get("Attendee 30")).toBeUndefined();
    expect(await held().get(id)).toBeDefined();
    await suite.engine?.stop();
    // A process started since tries it, and here the model takes it.
    start({ sweepMs: 100 });
    await eventually(
      async () => ((await held().get(id)) === undefined ? true : undefined),
      "applied by a process started since",
      5_000,
    );
    expect(applied.get("Attendee 30")).toBe(1);
    expect(await saved("E5")).toEqual({ unique: 1, present: 1, joins: 1 });
  });

  it("is tried by an instance of other code although it was running when the item was set aside (a rolling deploy)", async () => {
    await subscribeEvent(suite.store, "E9");
    bugOn(() => false);
    const swept = sweeps();
    // The fixed code, started first; the old code, still running beside it, then refuses an item.
    start({ sweepMs: 100, build: "fixed" });
    const old = "T1:E9:0000000090-0000-000000/0";
    const own = "T1:E9:0000000091-0000-000000/0";
    await held().put(old, {
      item: joinItem("E9", 90),
      at: Date.now(),
      why: "TypeError: x",
      build: "old",
    });
    // And one this code refused, beside it: left alone, as by any instance of the same code.
    await held().put(own, {
      item: joinItem("E9", 91),
      at: Date.now(),
      why: "TypeError: y",
      build: "fixed",
    });
    await eventually(
      async () => ((await held().get(old)) === undefined ? true : undefined),
      "applied by the other code",
      5_000,
    );
    await swept.after(3);
    expect(applied.get("Attendee 90")).toBe(1);
    expect(applied.get("Attendee 91")).toBeUndefined();
    expect(await held().get(own)).toBeDefined();
    expect(await saved("E9")).toEqual({ unique: 1, present: 1, joins: 1 });
  });

  it("refused again by other code, is kept with that code, so its instances leave it alone", async () => {
    await subscribeEvent(suite.store, "E10");
    const id = "T1:E10:0000000100-0000-000000/0";
    const at = Date.now();
    await held().put(id, { item: joinItem("E10", 100), at, why: "TypeError: x", build: "old" });
    bugOn((name) => name === "Attendee 100");
    const swept = sweeps();
    start({ sweepMs: 100, build: "new" });
    await eventually(
      async () => ((await held().get(id))?.build === "new" ? true : undefined),
      "kept with the new code",
      5_000,
    );
    await swept.after(3);
    expect(applied.get("Attendee 100")).toBe(1);
    const kept = await held().get(id);
    expect(kept?.why).toBe("TypeError: no seat for Attendee 100");
    expect(kept?.at).toBeGreaterThanOrEqual(at);
    expect(logged("left out and kept set aside")).toHaveLength(1);
  });

  it("set aside, tried by the next process with the bug still in, trips its breaker once and is not tried again", async () => {
    await subscribeEvent(suite.store, "E6");
    const ids = [40, 41, 42, 43, 44].map((i) => `T1:E6:000000000${i}-0000-000000/0`);
    const at = Date.now() - 1_000;
    for (const [n, id] of ids.entries()) {
      await held().put(id, { item: joinItem("E6", 40 + n), at, why: "TypeError: x" });
    }
    // And one another version set aside unread, which the model takes: the breaker does not
    // keep it from this process.
    const good = "T1:E6:0000000045-0000-000000/0";
    await held().put(good, { item: joinItem("E6", 45), at });
    bugOn((name) => name !== "Attendee 45");
    const swept = sweeps();
    start({ sweepMs: 100 });
    await eventually(
      () => (logged("looking after an event failed").length > 0 ? true : undefined),
      "the sweep's breaker",
      5_000,
    );
    // Sweeps past the first back-off of the failed step (1 s), which would have tried them again.
    await swept.after(15);
    // Each tried once at most (the fifth never: the fourth throw tripped it), none again.
    for (const n of [40, 41, 42, 43]) expect(applied.get(`Attendee ${n}`)).toBe(1);
    expect(applied.get("Attendee 44")).toBeUndefined();
    expect(applied.get("Attendee 45")).toBe(1);
    expect((await held().list("T1:E6:")).map((r) => r.id)).toEqual(ids);
    expect(logged("looking after an event failed")).toHaveLength(1);
  });

  it("set aside unread by another version, then thrown on here, is tried once and kept with why", async () => {
    await subscribeEvent(suite.store, "E7");
    const id = "T1:E7:0000000050-0000-000000/0";
    // Set aside by a version that did not read it: no why, and long before this process.
    await held().put(id, { item: joinItem("E7", 50), at: Date.now() - 60_000 });
    bugOn((name) => name === "Attendee 50");
    const swept = sweeps();
    start({ sweepMs: 100 });
    await eventually(
      async () => ((await held().get(id))?.why !== undefined ? true : undefined),
      "kept with why",
      5_000,
    );
    await swept.after(5);
    expect(applied.get("Attendee 50")).toBe(1);
    const kept = await held().get(id);
    expect(kept?.why).toBe("TypeError: no seat for Attendee 50");
    expect(kept?.item).toEqual(joinItem("E7", 50));
    expect(logged("left out and kept set aside")).toHaveLength(1);
  });

  it("counts what any instance set aside lately, so a restart does not start the breaker afresh", async () => {
    await subscribeEvent(suite.store, "E8");
    // Three set aside with why in the last minutes, by another instance or an earlier process.
    for (const n of [1, 2, 3]) {
      await held().put(`T1:E8:000000006${n}-0000-000000/0`, {
        item: joinItem("E8", 60 + n),
        at: Date.now() - n * 60_000,
        why: "TypeError: x",
      });
    }
    // One more, older than the window: not counted.
    await held().put("T1:E8:0000000069-0000-000000/0", {
      item: joinItem("E8", 69),
      at: Date.now() - 11 * 60_000,
      why: "TypeError: x",
    });
    bugOn((name) => name === "Attendee 70");
    await suite.store.outbox.put(joinItem("E8", 70));
    await suite.store.outbox.put(joinItem("E8", 71));
    start();
    await eventually(
      () => (logged("an event's turn failed").length > 0 ? true : undefined),
      "the event's turn failed",
      5_000,
    );
    expect(await outboxOf("E8")).toHaveLength(2);
    expect(await held().list("T1:E8:")).toHaveLength(4);
    expect(logged("the live model threw on an outbox item")).toEqual([]);
  });
});

/**
 * On a store several instances share, the event is leased: the run is read again under the same
 * lease, and a save that was extending it when the model threw must not write. Two engines on
 * one Redis or Postgres, the same item-throwing bug on both: the outcome is the one of one
 * instance.
 */
describeBackends(
  "an item the live model throws on, two instances",
  [
    {
      name: "redis",
      url: process.env.TEST_REDIS_URL ? () => process.env.TEST_REDIS_URL! : undefined,
    },
    {
      name: "postgres",
      url: process.env.TEST_POSTGRES_URL ? () => process.env.TEST_POSTGRES_URL! : undefined,
    },
  ],
  (backend) => {
    const { fresh, another } = storesOfEachTest(backend, { cipher: createCipher(randomBytes(32)) });
    const { logger, lines } = capturedLogs("info");
    const engines: LiveEngine[] = [];
    afterEach(async () => {
      await Promise.all(engines.splice(0).map((e) => e.stop()));
      vi.restoreAllMocks();
      applied.clear();
      lines.length = 0;
    });
    const engineOn = (store: Store) => {
      const e = new LiveEngine(
        {
          store,
          logger,
          bulkClient: () => Promise.reject(new Error("no Slack in this test")),
          now: () => Date.now(),
          onClose: () => undefined,
          metrics: createMetrics(),
        },
        { pollMs: 20, maxPollMs: 50, minTurnMs: 10 },
      );
      engines.push(e);
      e.start();
      return e;
    };

    it("is left out and set aside once; the rest is applied whole, and the event goes on", async () => {
      const { store, url, ns } = await fresh();
      const other = await another(url, ns);
      await subscribeEvent(store, "E1");
      bugOn((name) => name === "Attendee 2");
      const ids = [];
      for (const item of [
        joinItem("E1", 1),
        joinItem("E1", 2),
        joinItem("E1", 3),
        leftItem("E1", 1),
      ]) {
        ids.push(await store.outbox.put(item));
      }
      const first = engineOn(store);
      engineOn(other);
      const drained = () =>
        eventually(
          async () => ((await store.outbox.listEvent("T1", "E1")).length === 0 ? true : undefined),
          "E1's items drained",
          10_000,
        );
      const saved = async () => {
        const inst = (await first.loadLive("T1", "E1")).live.current();
        return inst && { unique: inst.unique, present: inst.present, joins: inst.joins };
      };
      await drained();
      expect(await saved()).toEqual({ unique: 2, present: 1, joins: 2 });
      const kept = await store.repository(heldRepo).list("T1:E1:");
      expect(kept.map((k) => [k.id, k.value.why])).toEqual([
        [ids[1], "TypeError: no seat for Attendee 2"],
      ]);
      expect(lines.filter((l) => String(l.msg).includes("an event's turn failed"))).toEqual([]);
      await other.outbox.put(joinItem("E1", 4));
      await drained();
      expect(await saved()).toEqual({ unique: 3, present: 2, joins: 3 });
    });

    it("is never saved half-applied by a save that was checking its lease when the model threw", async () => {
      const { store } = await fresh();
      await subscribeEvent(store, "E1");
      await store.outbox.put(joinItem("E1", 1));
      const e = engineOn(store);
      const drained = () =>
        eventually(
          async () => ((await store.outbox.listEvent("T1", "E1")).length === 0 ? true : undefined),
          "E1's items drained",
          10_000,
        );
      await drained();
      // Just before the model throws on attendee 2, a lane's save begins; the lease is short
      // (under half left), so that save first extends it (a round trip to the store) and only
      // then writes the model, which by then holds attendee 2's half-applied join.
      bugOn((name) => {
        if (name !== "Attendee 2") return false;
        const run = e.runs.get("T1:E1");
        if (run) {
          run.leaseUntil = Date.now() + 1_000;
          void run.save().catch(() => undefined);
        }
        return true;
      });
      await store.outbox.put(joinItem("E1", 2));
      await store.outbox.put(joinItem("E1", 3));
      await drained();
      const inst = (await e.loadLive("T1", "E1")).live.current();
      expect({ unique: inst?.unique, joins: inst?.joins }).toEqual({ unique: 2, joins: 2 });
      expect(await store.repository(heldRepo).list("T1:E1:")).toHaveLength(1);
    });
  },
);
