import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { fetchEvent } from "../../src/domain/event-lifecycle.ts";
import { EVENT_LOCK_MS, eventLockKey, withEventLock } from "../../src/domain/event-lock.ts";
import { patchRecord } from "../../src/domain/event-record.ts";
import { type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { seedEvent } from "../helpers/live-fixtures.ts";

/**
 * The event's shared record is written by the organizer flows, the live lifecycle and the live
 * worker. A write made while another holder's read-modify-write is in progress must wait for it
 * and then build on what it wrote, not on a copy read before.
 */

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the event record lock", () => {
  it("makes an organizer patch wait for a lifecycle change in progress and keep it", async () => {
    const deps = h.app.deps;
    const { eventId } = await seedEvent(deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Locked record",
    });
    let patched = false;
    await withEventLock(deps, TEAM, eventId, async () => {
      // A lifecycle change (a notify) read the record and is busy upstream…
      const read = await deps.store.events.get(TEAM, eventId);
      if (!read) throw new Error("no record");
      const patch = patchRecord(deps, TEAM, eventId, { cancelled: true }).then(() => {
        patched = true;
      });
      await sleep(300);
      // …the organizer's cancel has not written meanwhile…
      expect(patched).toBe(false);
      expect((await deps.store.events.get(TEAM, eventId))?.cancelled).toBeFalsy();
      // …and the lifecycle writes what it read plus its subscription.
      await deps.store.events.put({ ...read, subscriptions: [...read.subscriptions, "sub-new"] });
      void patch;
    });
    await expect.poll(() => patched, { timeout: 5_000 }).toBe(true);
    const after = await deps.store.events.get(TEAM, eventId);
    expect(after?.cancelled).toBe(true);
    expect(after?.subscriptions).toContain("sub-new");
    // Released: nothing holds the lock afterwards.
    expect(await deps.store.claimOnce(eventLockKey(TEAM, eventId), 1_000)).toBe(true);
    await deps.store.delete(eventLockKey(TEAM, eventId));
  });
  it("leaves a claim alone that lapsed and went to someone else", async () => {
    const deps = h.app.deps;
    const key = eventLockKey(TEAM, "evt-lapsed");
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      await withEventLock(deps, TEAM, "evt-lapsed", async () => {
        // This holder is slower than a claim lasts; meanwhile another process takes the lock.
        vi.setSystemTime(Date.now() + EVENT_LOCK_MS + 1_000);
        expect(await deps.store.claimOnce(key, EVENT_LOCK_MS)).toBe(true);
      });
      // The late holder's release did not free the other one's claim.
      expect(await deps.store.claimOnce(key, EVENT_LOCK_MS)).toBe(false);
    } finally {
      vi.useRealTimers();
      await deps.store.delete(key);
    }
  });

  it("does not hold up a read for the cached times when the record is busy", async () => {
    const deps = h.app.deps;
    const { eventId } = await seedEvent(deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Busy record",
    });
    const record = await deps.store.events.get(TEAM, eventId);
    const link = await deps.store.users.get(TEAM, USERS.omar);
    if (!record || !link) throw new Error("not seeded");
    // The stored times are stale, so the read would refresh them, but a notify holds the record.
    const stale = { ...record, lastEnd: 1 };
    await deps.store.events.put(stale);
    expect(await deps.store.claimOnce(eventLockKey(TEAM, eventId), EVENT_LOCK_MS)).toBe(true);
    try {
      const started = Date.now();
      const event = await fetchEvent(deps, stale, link);
      expect(event.title).toBe("Busy record");
      expect(Date.now() - started).toBeLessThan(2_000);
      expect((await deps.store.events.get(TEAM, eventId))?.lastEnd).toBe(1);
    } finally {
      await deps.store.delete(eventLockKey(TEAM, eventId));
    }
    // Free again: the next read refreshes the cached times.
    await fetchEvent(deps, stale, link);
    expect((await deps.store.events.get(TEAM, eventId))?.lastEnd).not.toBe(1);
  });
});
