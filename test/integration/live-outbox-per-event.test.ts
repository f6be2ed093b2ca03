import { randomBytes, randomUUID } from "node:crypto";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LiveEngine, type LiveEngineOptions } from "../../src/live/engine.ts";
import { EventLeases } from "../../src/live/leases.ts";
import { activeRepo, liveRepo } from "../../src/live/live-record.ts";
import { createLogger } from "../../src/log.ts";
import { createMetrics } from "../../src/metrics.ts";
import {
  createCipher,
  eventRepo,
  openStore,
  outboxBatchRepo,
  outboxRepo,
  type Store,
  subscriptionRepo,
  timeOrderedId,
} from "../../src/store/index.ts";
import { eventually } from "../helpers/live-fixtures.ts";
import { joinItem, subscribeEvent } from "../helpers/outbox-items.ts";

/**
 * The outbox keyed per event, on a Redis two instances share: a turn lists the events that have
 * work (one read) and reads the items only of those it owns or can take. An event another
 * instance holds is skipped without reading its items, however many wait there, and is drained
 * once it is free; the event's marker goes once its items have been drained.
 */

const REDIS = process.env.TEST_REDIS_URL;
const required = process.env.ONAIR_REQUIRE_SERVICES === "1";
const logger = createLogger({
  level: "warn",
  destination: new Writable({ write: (_c, _e, cb) => cb() }),
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!REDIS && !required)("the outbox keyed per event", () => {
  const ns = `outbox-${randomUUID().slice(0, 8)}`;
  const cipher = createCipher(randomBytes(32));
  let writer: Store;
  let reader: Store;
  let engine: LiveEngine | undefined;
  beforeAll(async () => {
    if (!REDIS) throw new Error("TEST_REDIS_URL is required (ONAIR_REQUIRE_SERVICES=1)");
    const open = () => openStore(REDIS, { cipher, namespace: ns, sweepIntervalMs: 0 });
    writer = await open();
    reader = await open();
  });
  const noMarkers = async () => ((await writer.outbox.work()).length === 0 ? true : undefined);
  /** The engine on the reader's store, started. */
  const startEngine = (options: LiveEngineOptions) => {
    const e = new LiveEngine(
      {
        store: reader,
        logger,
        bulkClient: () => Promise.reject(new Error("no Slack in this test")),
        now: () => Date.now(),
        onClose: () => undefined,
        metrics: createMetrics(),
      },
      options,
    );
    e.start();
    return e;
  };
  /** The same, its sweep every 300 ms. */
  const startSweeping = () =>
    startEngine({ pollMs: 50, maxPollMs: 200, minTurnMs: 20, leaseMs: 10_000, sweepMs: 300 });
  /**
   * The engine with short leases (1.5 s) that keeps what it holds (no idle release), and another
   * owner's leases, to see whether it could take an event.
   */
  const startHolding = () => {
    const e = startEngine({
      pollMs: 50,
      maxPollMs: 100,
      minTurnMs: 20,
      leaseMs: 1_500,
      idleReleaseMs: 60_000,
    });
    engine = e;
    return { e, other: new EventLeases(writer, logger, 60_000) };
  };
  afterAll(async () => {
    await engine?.stop();
    await writer?.deletePrefix("").catch(() => 0);
    await writer?.close();
    await reader?.close();
  });

  it("skips the items of an event another instance holds, and drains them once it is free", async () => {
    // Another instance holds E1.
    const other = new EventLeases(writer, logger, 60_000);
    expect(await other.take("T1", "E1")).toBeDefined();
    const put = (eventId: string) =>
      writer.outbox.put({
        team: "T1",
        subscriptionId: "sub-gone",
        eventId,
        receivedAt: Date.now(),
        message: { type: "EVENT_STATE", eventId, instanceId: "i1", info: { state: "IN_EVENT" } },
      });
    for (let i = 0; i < 30; i++) {
      await put("E1");
      await put("E2");
    }

    const listed: string[] = [];
    const listEvent = reader.outbox.listEvent.bind(reader.outbox);
    reader.outbox.listEvent = (team, eventId, limit) => {
      listed.push(eventId);
      return listEvent(team, eventId, limit);
    };
    const metrics = createMetrics();
    engine = new LiveEngine(
      {
        store: reader,
        logger,
        bulkClient: () => Promise.reject(new Error("no Slack in this test")),
        now: () => Date.now(),
        onClose: () => undefined,
        metrics,
      },
      { pollMs: 50, maxPollMs: 200, minTurnMs: 20, leaseMs: 10_000 },
    );
    engine.start();

    await eventually(
      async () => ((await reader.outbox.listEvent("T1", "E2")).length === 0 ? true : undefined),
      "E2's items drained",
      10_000,
    );
    // Several more turns while E1 is held.
    await sleep(1_000);
    expect(listed.filter((e) => e === "E1")).toEqual([]);
    expect(await writer.outbox.listEvent("T1", "E1")).toHaveLength(30);
    await eventually(
      async () =>
        (await writer.outbox.work()).map((w) => w.eventId).join() === "E1" ? true : undefined,
      "E2's marker cleared, E1's kept",
      5_000,
    );

    expect(await other.giveBack("T1", "E1")).toBe(true);
    await eventually(
      async () => ((await writer.outbox.listEvent("T1", "E1")).length === 0 ? true : undefined),
      "E1's items drained once it was free",
      10_000,
    );
    await eventually(
      async () => ((await writer.outbox.work()).length === 0 ? true : undefined),
      "every marker cleared",
      5_000,
    );
    const { written } = writer.outbox.counts();
    expect(written).toBe(60);
    await engine.stop();
    engine = undefined;
  }, 40_000);

  it("clears an event's marker soon after its last item, when one arrived between the marker's read and the listing", async () => {
    const put = () =>
      writer.outbox.put({
        team: "T1",
        subscriptionId: "sub-gone",
        eventId: "E4",
        receivedAt: Date.now(),
        message: {
          type: "EVENT_STATE",
          eventId: "E4",
          instanceId: "i1",
          info: { state: "IN_EVENT" },
        },
      });
    await put();
    // The turn reads the marker (naming the first item); the last item and its marker land
    // before the turn lists the event: drained in that turn, its marker is seen only after.
    const work = reader.outbox.work.bind(reader.outbox);
    let late = true;
    reader.outbox.work = async () => {
      const marks = await work();
      if (late && marks.some((m) => m.eventId === "E4")) {
        late = false;
        await put();
      }
      return marks;
    };
    engine = startEngine({ pollMs: 20, maxPollMs: 100, minTurnMs: 10, leaseMs: 10_000 });
    // Well before a marker naming an item never found is dropped as stale (30 s).
    await eventually(
      async () =>
        !late &&
        (await writer.outbox.listEvent("T1", "E4")).length === 0 &&
        (await writer.outbox.work()).length === 0
          ? true
          : undefined,
      "E4 drained and its marker cleared",
      5_000,
    );
    reader.outbox.work = work;
    await engine.stop();
    engine = undefined;
  }, 20_000);

  it("does not read again at once a full listing of earlier versions' items it cannot take", async () => {
    // Items of an earlier version (keyed by sequence alone) of an event another instance holds:
    // a full listing of them, none removable here.
    const other = new EventLeases(writer, logger, 60_000);
    expect(await other.take("T1", "E9")).toBeDefined();
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const id = timeOrderedId();
      ids.push(id);
      await writer.repository(outboxRepo).put(id, {
        team: "T1",
        subscriptionId: "sub-gone",
        eventId: "E9",
        receivedAt: Date.now(),
        message: {
          type: "EVENT_STATE",
          eventId: "E9",
          instanceId: "i1",
          info: { state: "IN_EVENT" },
        },
      });
    }
    let reads = 0;
    const listLegacy = reader.outbox.listLegacy.bind(reader.outbox);
    reader.outbox.listLegacy = (limit) => {
      reads++;
      return listLegacy(limit);
    };
    engine = startEngine({
      batch: 10,
      pollMs: 60_000,
      maxPollMs: 60_000,
      minTurnMs: 60_000,
      leaseMs: 10_000,
    });
    try {
      await eventually(async () => (reads >= 1 ? true : undefined), "the first turn", 5_000);
      await engine.settled();
      // The next look waits (here a minute): no turn after turn over the same ten items.
      await sleep(500);
      expect(reads).toBe(1);
      expect(await writer.outbox.listLegacy()).toHaveLength(12);
    } finally {
      await engine.stop();
      engine = undefined;
      reader.outbox.listLegacy = listLegacy;
      for (const id of ids) await writer.outbox.remove(id);
      await other.giveBack("T1", "E9");
    }
  }, 20_000);

  it("extends the leases of the events it holds while another event's record cannot be read", async () => {
    await subscribeEvent(writer, "E20");
    await Promise.all(Array.from({ length: 20 }, (_, i) => writer.outbox.put(joinItem("E20", i))));
    // E21's record fails its schema as it is read back: its turns fail, every time.
    const bad = `T1:E21:${timeOrderedId()}`;
    await writer
      .repository(outboxBatchRepo)
      .put(bad, { items: [{ ...joinItem("E21", 0), receivedAt: "yesterday" }] });
    await writer.outbox.markWork("T1", "E21", bad);
    const { e, other } = startHolding();
    try {
      await eventually(
        async () => ((await writer.outbox.listEvent("T1", "E20")).length === 0 ? true : undefined),
        "E20 drained",
        5_000,
      );
      // Over two leases' worth: held all along, extended by housekeeping at every turn.
      await sleep(3_500);
      expect(e.runs.has("T1:E20")).toBe(true);
      expect(await other.take("T1", "E20")).toBeUndefined();
      expect((await e.figures("T1", "E20"))?.unique).toBe(20);
    } finally {
      await e.stop();
      engine = undefined;
      await other.giveBack("T1", "E20");
      await writer.deleteMany([writer.repository(outboxBatchRepo).key(bad)]);
      // Settled markers expire in a millisecond: gone before the next test looks.
      for (const m of await writer.outbox.work()) await writer.outbox.settle(m);
      await eventually(noMarkers, "no markers left", 2_000);
    }
  }, 20_000);

  it("takes up left markers past events it cannot take up, and holds no lease it cannot use", async () => {
    const active = writer.repository(activeRepo);
    // E30's live record fails its schema: taking it up fails as its record is loaded.
    const liveKey = writer.repository(liveRepo).key("T1:E30");
    await writer.set(liveKey, { not: "a live record" });
    // E31's event record fails its schema: taken up, its resume fails reading it.
    const eventKey = writer.repository(eventRepo).key("T1:E31");
    await writer.set(eventKey, { not: "an event" });
    // E32 is left by a process that is gone, its subscription gone since: taken up, let go.
    for (const id of ["T1:E30", "T1:E31", "T1:E32"]) await active.put(id, { since: Date.now() });
    const e = startEngine({ pollMs: 50, maxPollMs: 100, minTurnMs: 20, leaseMs: 10_000 });
    engine = e;
    const other = new EventLeases(writer, logger, 60_000);
    try {
      await eventually(
        async () => ((await active.get("T1:E32")) ? undefined : true),
        "E32 taken up past E30 and E31, and let go",
        5_000,
      );
      // Neither is held: no run, no lease (another instance, a newer version, may take them).
      expect(e.runs.has("T1:E30")).toBe(false);
      expect(e.runs.has("T1:E31")).toBe(false);
      expect(await other.take("T1", "E30")).toBeDefined();
      expect(await other.take("T1", "E31")).toBeDefined();
      // Their markers stay, for the next try.
      expect(await active.get("T1:E30")).toBeDefined();
      expect(await active.get("T1:E31")).toBeDefined();
    } finally {
      await e.stop();
      engine = undefined;
      await other.giveBack("T1", "E30");
      await other.giveBack("T1", "E31");
      await writer.deleteMany([liveKey, eventKey, active.key("T1:E30"), active.key("T1:E31")]);
    }
  }, 20_000);

  it("looks after the other events' leases while one event's upkeep fails", async () => {
    await subscribeEvent(writer, "E40");
    await subscribeEvent(writer, "E41");
    // E40 sorts first, so its run is looked after first at every turn.
    for (const eventId of ["E40", "E41"]) {
      await Promise.all(
        Array.from({ length: 5 }, (_, i) => writer.outbox.put(joinItem(eventId, i))),
      );
    }
    const { e, other } = startHolding();
    const subKey = writer.repository(subscriptionRepo).key("sub-E40");
    try {
      await eventually(
        async () => ((await writer.outbox.work()).length === 0 ? true : undefined),
        "both drained",
        5_000,
      );
      // E40's subscription now fails its schema: its upkeep (reading it again every 2 s) fails.
      await writer.set(subKey, { not: "a subscription" });
      // Over two leases' worth: E41's lease extended at every turn past E40's failing upkeep,
      // and E40's own too (its lease is looked after apart from its upkeep).
      await sleep(3_500);
      expect(e.runs.has("T1:E41")).toBe(true);
      expect(await other.take("T1", "E41")).toBeUndefined();
      expect(e.runs.has("T1:E40")).toBe(true);
      expect(await other.take("T1", "E40")).toBeUndefined();
      expect((await e.figures("T1", "E41"))?.unique).toBe(5);
    } finally {
      await e.stop();
      engine = undefined;
      await writer.deleteMany([subKey]);
    }
  }, 20_000);

  it("marks and drains an item whose marker never landed (its write failed after the item's)", async () => {
    // The item alone, as the repository writes it, with no marker beside it.
    const id = `T1:E3:${timeOrderedId()}`;
    await writer.repository(outboxRepo).put(id, {
      team: "T1",
      subscriptionId: "sub-gone",
      eventId: "E3",
      receivedAt: Date.now(),
      message: {
        type: "EVENT_STATE",
        eventId: "E3",
        instanceId: "i1",
        info: { state: "IN_EVENT" },
      },
    });
    expect(await writer.outbox.work()).toEqual([]);
    engine = startSweeping();
    await eventually(
      async () => ((await writer.outbox.get(id)) === undefined ? true : undefined),
      "the unmarked item drained",
      10_000,
    );
    await eventually(noMarkers, "its marker cleared", 5_000);
    await engine.stop();
    engine = undefined;
  }, 20_000);

  it("marks an event with no marker however many records of other events sort before it", async () => {
    // Another instance holds E4, whose 300 records (one item each, marked) stay; E5's one record
    // sorts after them all and lost its marker. A listing of the outbox reads 250 records.
    const other = new EventLeases(writer, logger, 60_000);
    expect(await other.take("T1", "E4")).toBeDefined();
    const message = (eventId: string) => ({
      type: "EVENT_STATE",
      eventId,
      instanceId: "i1",
      info: { state: "IN_EVENT" },
    });
    for (let i = 0; i < 300; i++) {
      await writer.outbox.put({
        team: "T1",
        subscriptionId: "sub-gone",
        eventId: "E4",
        receivedAt: Date.now(),
        message: message("E4"),
      });
    }
    const id = `T1:E5:${timeOrderedId(Date.now() - 120_000)}`;
    await writer.repository(outboxRepo).put(id, {
      team: "T1",
      subscriptionId: "sub-gone",
      eventId: "E5",
      receivedAt: Date.now(),
      message: message("E5"),
    });
    expect((await writer.outbox.work()).map((w) => w.eventId)).toEqual(["E4"]);
    engine = startSweeping();
    await eventually(
      async () => ((await writer.outbox.get(id)) === undefined ? true : undefined),
      "E5 marked by the sweep and drained",
      10_000,
    );
    // E4's records untouched: the sweep read one record of each event, not E4's backlog.
    expect(await writer.outbox.listEvent("T1", "E4")).toHaveLength(300);
    expect(await other.giveBack("T1", "E4")).toBe(true);
    await eventually(noMarkers, "E4 drained once free, every marker cleared", 10_000);
    await engine.stop();
    engine = undefined;
  }, 30_000);
});
