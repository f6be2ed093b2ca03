import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { notifyCard } from "../helpers/live-card.ts";
import { eventually, seedEvent } from "../helpers/live-fixtures.ts";

/**
 * Saves are fenced by the lease. An owner whose run stalls past its whole lease (a long GC, a
 * starved machine) must not write its older state over the state of the instance that took the
 * event meanwhile, nor drop the outbox items it applied without saving them. Housekeeping,
 * which notices a lapsed lease, runs between outbox turns, so a stall inside a turn reaches the
 * save first: the stall is made there, in the turn's read of the subscription (the thread
 * blocked past the lease), and another instance takes the lapsed lease as it ends.
 */

const REDIS = process.env.TEST_REDIS_URL;
const required = process.env.ONAIR_REQUIRE_SERVICES === "1";
const LEASE_MS = 1_000;

describe.skipIf(!REDIS && !required)("a save after a stall past the lease", () => {
  let h: Harness;
  beforeAll(async () => {
    if (!REDIS) throw new Error("TEST_REDIS_URL is required (ONAIR_REQUIRE_SERVICES=1)");
    h = await startHarness({
      storeUrl: REDIS,
      storeNamespace: `fence-${randomUUID().slice(0, 8)}`,
      liveEngine: "inline",
      liveOptions: { leaseMs: LEASE_MS, paceMs: 300, digestEveryMs: 300 },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("writes nothing, keeps the messages for the new owner, and loses none", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Fenced all hands",
    });
    await notifyCard(h, event, CHANNELS.events, "digest");
    await h.sandbox.control.setState(event.eventId, { state: "IN_EVENT" });
    expect((await h.sandbox.control.attendees(event.eventId, { count: 3 })).delivered).toBe(3);
    await eventually(
      async () =>
        (await h.app.live.figures(TEAM, event.eventId))?.unique === 3 ? true : undefined,
      "the first three applied",
    );

    // The next turn's read of the subscription stalls past the lease; meanwhile another
    // instance takes the lapsed lease.
    const leaseKey = `live-lease:${TEAM}:${event.eventId}`;
    const subscriptions = h.app.store.subscriptions;
    const read = subscriptions.get.bind(subscriptions);
    const lostLines = () => h.logs.filter((l) => l.includes("lost an event's lease")).length;
    // A lease lost earlier (a renewal late under load) is not this one.
    const lostBefore = lostLines();
    let stalled = false;
    subscriptions.get = async (id) => {
      if (!stalled && new Error().stack?.includes("ingest")) {
        stalled = true;
        // The stall: this thread (the app, its engine inline) does nothing while the lease
        // runs out in Redis.
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, LEASE_MS + 300);
        expect(await h.app.store.claimOnce(leaseKey, 60_000, "another-instance")).toBe(true);
      }
      return read(id);
    };
    expect((await h.sandbox.control.attendees(event.eventId, { count: 2 })).delivered).toBe(2);
    await eventually(
      () =>
        stalled &&
        h.logs
          .filter((l) => l.includes("lost an event's lease"))
          .slice(lostBefore)
          .some((l) => l.includes("not ours at a save"))
          ? true
          : undefined,
      "the lost lease noticed",
    );
    subscriptions.get = read;

    // Noticed at the save, before it wrote: what is stored is still the first three, and the
    // two stay in the outbox.
    expect((await h.app.live.figures(TEAM, event.eventId))?.unique).toBe(3);
    const waiting = (await h.app.store.outbox.list()).filter(
      (r) => r.item.eventId === event.eventId,
    );
    expect(waiting).toHaveLength(2);
    expect(h.logs.filter((l) => l.includes("lost an event's lease")).join("")).toContain(
      "not ours at a save",
    );

    // The other instance goes away without them: once its lease is gone, this one applies them.
    expect(await h.app.store.delete(leaseKey)).toBe(true);
    await eventually(
      async () =>
        (await h.app.live.figures(TEAM, event.eventId))?.unique === 5 ? true : undefined,
      "the two applied by the next owner",
      15_000,
    );
  });
});
