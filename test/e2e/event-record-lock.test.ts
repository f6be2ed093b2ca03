import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventLockKey, withEventLock } from "../../src/live/lock.ts";
import { patchRecord } from "../../src/slack/organizer/common.ts";
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
});
