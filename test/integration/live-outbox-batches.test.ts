import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import type { LiveEngine, LiveEngineOptions } from "../../src/live/engine.ts";
import { createLogger } from "../../src/log.ts";
import {
  outboxBatchRepo,
  outboxRepo,
  outboxWorkRepo,
  STORE_ERROR_CODES,
  StoreError,
  timeOrderedId,
} from "../../src/store/index.ts";
import { eventually } from "../helpers/live-fixtures.ts";
import { engineSuite, joinItem, subscribeEvent } from "../helpers/outbox-items.ts";

/**
 * The live engine on outbox batches (one record per event and turn), on a real SQLite file: it
 * drains them with an event's items of earlier versions in order, removes each record once,
 * clears the marker naming the last one, reads about `batch` items a turn however large the
 * backlog, and marks a batch whose marker never landed.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const logger = createLogger({
  level: "warn",
  destination: new Writable({ write: (_c, _e, cb) => cb() }),
});

describe("the live engine on outbox batches", () => {
  const { suite, start: startEngine } = engineSuite("batches", logger, {
    pollMs: 20,
    maxPollMs: 100,
    minTurnMs: 10,
  });
  afterEach(() => unspy());

  const item = joinItem;
  const subscribe = (eventId: string) => subscribeEvent(suite.store, eventId);

  /** Every listing of an event the engine makes in its turns, as returned. */
  const listings: Array<{ eventId: string; items: number; records: number; more: boolean }> = [];
  let unspy = () => {};
  function start(options: LiveEngineOptions): LiveEngine {
    const original = suite.store.outbox.eventPage;
    suite.store.outbox.eventPage = async (team, eventId, limit) => {
      const page = await original.call(suite.store.outbox, team, eventId, limit);
      const records = new Set(page.rows.map((r) => r.key)).size;
      listings.push({ eventId, items: page.rows.length, records, more: page.more });
      return page;
    };
    unspy = () => {
      suite.store.outbox.eventPage = original;
    };
    return startEngine(options);
  }

  /** `records` full records of 64 items, one turn of the route each, written before it starts. */
  const fullRecords = async (eventId: string, records: number) => {
    for (let t = 0; t < records; t++) {
      await Promise.all(
        Array.from({ length: 64 }, (_, i) => suite.store.outbox.put(item(eventId, t * 64 + i))),
      );
    }
  };

  const left = async (eventId: string) =>
    (await suite.store.outbox.listEvent("T1", eventId)).length;

  it("drains an event's item of an earlier version and its batches in order, each record removed once, and clears its marker", async () => {
    await subscribe("E1");
    const old = `T1:E1:${timeOrderedId(Date.now() - 60_000)}`;
    await suite.store.repository(outboxRepo).put(old, item("E1", 0));
    // One turn: 300 items in five records (64 each, the last 44).
    const ids = await Promise.all(
      Array.from({ length: 300 }, (_, i) => suite.store.outbox.put(item("E1", i + 1))),
    );
    expect(new Set(ids.map((id) => id.slice(0, id.lastIndexOf("/")))).size).toBe(5);
    const deleted: string[][] = [];
    const deleteMany = suite.store.deleteMany.bind(suite.store);
    suite.store.deleteMany = (keys) => {
      deleted.push([...keys]);
      return deleteMany(keys);
    };
    try {
      const e = start({});
      await eventually(
        async () =>
          (await left("E1")) === 0 && (await suite.store.outbox.work()).length === 0
            ? true
            : undefined,
        "E1 drained and its marker cleared",
        10_000,
      );
      await e.settled();
      const outboxKeys = deleted.flat().filter((k) => k.startsWith("outbox"));
      // Each record once: the old item's and the five batches'.
      expect(outboxKeys).toHaveLength(6);
      expect(new Set(outboxKeys).size).toBe(6);
      expect(outboxKeys.filter((k) => k.startsWith("outbox:"))).toEqual([`outbox:${old}`]);
      // Every one of the 301 applied: 301 attendees.
      const figures = await e.figures("T1", "E1");
      expect(figures?.unique).toBe(301);
    } finally {
      suite.store.deleteMany = deleteMany;
    }
  }, 20_000);

  it("reads about `batch` items a turn from a large backlog of full records, and clears the marker when done", async () => {
    await subscribe("E2");
    // Ten turns' worth written before the engine starts: ten records of 64.
    await fullRecords("E2", 10);
    listings.length = 0;
    start({ batch: 100 });
    await eventually(
      async () =>
        (await left("E2")) === 0 &&
        !(await suite.store.outbox.work()).some((w) => w.eventId === "E2")
          ? true
          : undefined,
      "E2 drained and its marker cleared",
      // Well before a marker naming a record never seen is dropped as stale (30 s).
      10_000,
    );
    const reads = listings.filter((l) => l.eventId === "E2" && l.items > 0);
    // 100 items or a little more (whole records of 64): two records a turn, never all ten.
    expect(Math.max(...reads.map((l) => l.items))).toBe(128);
    expect(reads.map((l) => l.records)).toEqual([2, 2, 2, 2, 2]);
  }, 20_000);

  it("keeps an old marker while small records are left past a listing's bound, and reads on at once", async () => {
    await subscribe("E4");
    // A backlog of records of one item each (one turn each), as after a restart: a listing of
    // `batch` (1,000) items stops at 250 records, long before 1,000 items.
    const count = 520;
    for (let i = 0; i < count; i++) await suite.store.outbox.put(item("E4", i));
    const mark = (await suite.store.outbox.work()).find((w) => w.eventId === "E4");
    expect(mark).toBeDefined();
    // Written over 30 s ago (STALE_MARK_MS): a marker past that is cleared without its record
    // being seen, which must not happen while records are left.
    await suite.store
      .repository(outboxWorkRepo)
      .put("T1:E4", { last: mark?.last ?? "", at: Date.now() - 60_000 });
    // What was left of E4 whenever its marker was cleared.
    const leftWhenCleared: number[] = [];
    const settle = suite.store.outbox.settle;
    suite.store.outbox.settle = async (m) => {
      const cleared = await settle.call(suite.store.outbox, m);
      if (cleared && m.eventId === "E4") leftWhenCleared.push(await left("E4"));
      return cleared;
    };
    try {
      listings.length = 0;
      const e = start({});
      await eventually(
        async () => ((await left("E4")) === 0 && leftWhenCleared.length > 0 ? true : undefined),
        "E4 drained and its marker cleared",
        10_000,
      );
      await e.settled();
      expect(leftWhenCleared).toEqual([0]);
      const reads = listings.filter((l) => l.eventId === "E4" && l.items > 0);
      // 250 records a listing, each past the bound but the last, in consecutive turns.
      expect(reads.map((l) => [l.records, l.more])).toEqual([
        [250, true],
        [250, true],
        [20, false],
      ]);
      expect((await e.figures("T1", "E4"))?.unique).toBe(count);
    } finally {
      suite.store.outbox.settle = settle;
    }
  }, 30_000);

  it("follows a turn that stopped at `batch` with items left at once, not after `minTurnMs`", async () => {
    await subscribe("E5");
    // Five turns' worth (ten records of 64, two a turn at batch 100), written before it starts.
    await fullRecords("E5", 10);
    listings.length = 0;
    // A minute between turns that gather new items: waiting it after a full batch would leave
    // all but the first turn's items for minutes. Nothing nudges here; only the backlog drives.
    const e = start({ batch: 100, minTurnMs: 60_000, pollMs: 60_000, maxPollMs: 60_000 });
    await eventually(
      async () => ((await left("E5")) === 0 ? true : undefined),
      "E5's backlog drained in consecutive turns",
      10_000,
    );
    await e.settled();
    const reads = listings.filter((l) => l.eventId === "E5" && l.items > 0);
    expect(reads.map((l) => [l.records, l.more])).toEqual([
      [2, true],
      [2, true],
      [2, true],
      [2, true],
      [2, false],
    ]);
    expect((await e.figures("T1", "E5"))?.unique).toBe(640);
    // And quiet once the backlog is gone: no further turn (each begins by reading the markers)
    // before the poll's minute.
    const work = suite.store.outbox.work;
    let turns = 0;
    suite.store.outbox.work = () => {
      turns++;
      return work.call(suite.store.outbox);
    };
    try {
      await sleep(300);
      expect(turns).toBe(0);
    } finally {
      suite.store.outbox.work = work;
    }
  }, 20_000);

  it("does not start the next turn at once when a turn fails after a full batch", async () => {
    await subscribe("E6");
    await subscribe("E7");
    await fullRecords("E6", 4);
    await fullRecords("E7", 1);
    listings.length = 0;
    // In one turn: E6's listing stops at the bound with records left (the next turn would start
    // at once), then E7's listing fails, as a store going down mid-turn (markers in key order).
    let failed = 0;
    const listed = suite.store.outbox.eventPage;
    suite.store.outbox.eventPage = async (team, eventId, limit) => {
      if (eventId === "E7") {
        failed++;
        throw new StoreError(STORE_ERROR_CODES.unavailable, "list", "sqlite", undefined, "down");
      }
      return listed.call(suite.store.outbox, team, eventId, limit);
    };
    // Start the spy (start) over the failing listing: only successful listings are recorded.
    const e = start({ batch: 100, minTurnMs: 5_000, pollMs: 5_000, maxPollMs: 5_000 });
    try {
      await eventually(async () => (failed >= 1 ? true : undefined), "the failing turn", 10_000);
      await e.settled();
      // The failed turn is followed by the poll's wait, not by another turn at once.
      await sleep(500);
      expect(failed).toBe(1);
      expect(listings.filter((l) => l.eventId === "E6").map((l) => l.more)).toEqual([true]);
      expect(await left("E6")).toBe(256 - 128);
    } finally {
      await e.stop();
      suite.store.outbox.eventPage = listed;
      // Nothing left for the tests after this one: the rest of E6 and E7, and their markers.
      for (const ev of ["E6", "E7"]) {
        const keys = (await suite.store.outbox.listEvent("T1", ev)).map((r) => r.key);
        await suite.store.deleteMany([...new Set(keys)]);
        for (const m of await suite.store.outbox.work())
          if (m.eventId === ev) await suite.store.outbox.settle(m);
      }
    }
  }, 20_000);

  it("marks and drains a batch whose marker never landed", async () => {
    await subscribe("E3");
    const id = `T1:E3:${timeOrderedId()}`;
    await suite.store
      .repository(outboxBatchRepo)
      .put(id, { items: [item("E3", 1), item("E3", 2), item("E3", 3)] });
    expect((await suite.store.outbox.work()).some((w) => w.eventId === "E3")).toBe(false);
    const e = start({ sweepMs: 50 });
    await eventually(
      async () => ((await left("E3")) === 0 ? true : undefined),
      "the unmarked batch found by the sweep and drained",
      10_000,
    );
    await e.settled();
    expect((await e.figures("T1", "E3"))?.unique).toBe(3);
  }, 20_000);
});
