import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { LIVE_REPOSITORIES } from "../../src/live/live-record.ts";
import { HELD_TTL_MS, heldRepo } from "../../src/live/set-aside.ts";
import { createCipher, openStore, timeOrderedId } from "../../src/store/index.ts";
import { eventually } from "../helpers/live-fixtures.ts";
import { capturedLogs } from "../helpers/log-lines.ts";
import { engineSuite, joinItem, subscribeEvent } from "../helpers/outbox-items.ts";

/**
 * An outbox item whose message this version does not read (a newer version accepted a kind of
 * message this one does not know, during a rolling deploy) is set aside, not removed with its
 * record: the event's other items go on, and a version that reads it applies it when it takes
 * the event up. On a real SQLite file.
 */

describe("outbox items this version cannot read", () => {
  const { logger, lines } = capturedLogs("info");
  const { suite, start } = engineSuite("set-aside", logger, {
    pollMs: 20,
    maxPollMs: 50,
    minTurnMs: 10,
  });
  afterEach(() => {
    lines.length = 0;
  });
  const held = () => suite.store.repository(heldRepo);
  const drained = (eventId: string, what: string) =>
    eventually(
      async () =>
        (await suite.store.outbox.listEvent("T1", eventId)).length === 0 ? true : undefined,
      what,
      5_000,
    );
  /** An item a newer version would accept: a kind of message this one does not know. */
  const newerKind = (eventId: string) => ({
    ...joinItem(eventId, 99),
    message: { type: "ATTENDEE_REACTION", eventId, instanceId: "i1", info: { emoji: "wave" } },
  });
  const logged = (msg: string) => lines.filter((l) => String(l.msg).includes(msg));

  it("sets one aside as it is, before its record goes, and applies the items around it", async () => {
    await subscribeEvent(suite.store, "E1");
    const before = Date.now();
    const ids = await Promise.all([
      suite.store.outbox.put(joinItem("E1", 1)),
      suite.store.outbox.put(newerKind("E1")),
      suite.store.outbox.put(joinItem("E1", 2)),
    ]);
    const e = start();
    await drained("E1", "E1's record drained");
    expect((await e.figures("T1", "E1"))?.unique).toBe(2);
    // Kept under the item's own id, as the route stored it.
    const kept = await held().list("T1:E1:");
    expect(kept.map((r) => r.id)).toEqual([ids[1]]);
    expect(kept[0]?.value.item).toEqual(newerKind("E1"));
    expect(kept[0]?.value.at).toBeGreaterThanOrEqual(before);
    const warned = logged("were set aside");
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ event: "E1", items: 1 });
    // Purged by the store's sweep a week on, long after any rollout.
    const ttl = heldRepo.ttlOf?.({ item: newerKind("E1"), at: Date.now() }) ?? 0;
    expect(Math.abs(ttl - HELD_TTL_MS)).toBeLessThan(1_000);
  });

  it("applies one this version reads when it takes the event up, and keeps one it cannot", async () => {
    await subscribeEvent(suite.store, "E2");
    // Set aside by another version: one item this version reads, one it does not.
    const readableId = `T1:E2:${timeOrderedId()}/0`;
    const unreadId = `T1:E2:${timeOrderedId()}/1`;
    await held().put(readableId, { item: joinItem("E2", 7), at: Date.now() });
    await held().put(unreadId, { item: newerKind("E2"), at: Date.now() });
    // A newer item brings the event to this engine.
    await suite.store.outbox.put(joinItem("E2", 8));
    const e = start();
    await drained("E2", "E2 drained");
    const figures = await e.figures("T1", "E2");
    expect(figures?.unique).toBe(2);
    expect((await held().list("T1:E2:")).map((r) => r.id)).toEqual([unreadId]);
    const applied = logged("an earlier owner set aside");
    expect(applied).toHaveLength(1);
    expect(applied[0]).toMatchObject({ event: "E2", applied: 1, unread: 1 });
    // Not set aside again, nor applied twice, at the event's later turns.
    await suite.store.outbox.put(joinItem("E2", 9));
    await drained("E2", "E2's next item drained");
    expect((await e.figures("T1", "E2"))?.unique).toBe(3);
    expect(logged("were set aside")).toHaveLength(0);
    expect(logged("an earlier owner set aside")).toHaveLength(1);
  });
});

describe("items set aside, on uninstall", () => {
  const dir = mkdtempSync(join(tmpdir(), "onair-set-aside-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("go with the team's data", async () => {
    const store = await openStore(`sqlite://${join(dir, "s.sqlite")}`, {
      cipher: createCipher(randomBytes(32)),
      sweepIntervalMs: 0,
      repositories: LIVE_REPOSITORIES,
    });
    try {
      const held = store.repository(heldRepo);
      await held.put(`T1:E1:${timeOrderedId()}/0`, { item: joinItem("E1", 1), at: Date.now() });
      await held.put(`T2:E1:${timeOrderedId()}/0`, {
        item: { ...joinItem("E1", 1), team: "T2" },
        at: Date.now(),
      });
      expect(await store.deleteTeam("T1")).toBeGreaterThanOrEqual(1);
      expect(await held.list("T1:")).toEqual([]);
      expect(await held.list("T2:")).toHaveLength(1);
    } finally {
      await store.close();
    }
  });
});
