import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KeyvEntry } from "keyv";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  createCipher,
  OutboxItemSchema,
  openStore,
  outboxBatchRepo,
  outboxRepo,
  type Store,
  timeOrderedId,
} from "../../src/store/index.ts";

/**
 * An event's items stored in one turn of the event loop go in one record
 * (`outbox-batch:{team}:{eventId}:{seq}`, in arrival order), with the event's marker
 * (`outbox-work:{team}:{eventId}`) naming it, in one group commit; a later turn starts a new
 * record and moves the marker on. On a real SQLite file, counting what reaches the store's keyv
 * adapter.
 */
describe("the outbox, one record and one marker per event per turn", () => {
  const dir = mkdtempSync(join(tmpdir(), "onair-marker-"));
  let store: Store;
  /** Entries of each group write that reached the adapter, by key. */
  const groups: string[][] = [];
  let failWrites = false;
  beforeAll(async () => {
    store = await openStore(`sqlite://${join(dir, "s.sqlite")}`, {
      cipher: createCipher(randomBytes(32)),
      sweepIntervalMs: 0,
    });
    const adapter = store.keyv.store as { setMany(e: KeyvEntry[]): Promise<unknown> };
    const setMany = adapter.setMany.bind(adapter);
    adapter.setMany = (entries) => {
      groups.push(entries.map((e) => e.key));
      if (failWrites) return Promise.reject(new Error("disk full"));
      return setMany(entries);
    };
  });
  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const item = (eventId: string, i: number) => ({
    team: "T1",
    subscriptionId: "sub-1",
    eventId,
    receivedAt: i,
    message: { i },
  });
  const recordOf = (id: string) => id.slice(0, id.lastIndexOf("/"));

  it("keeps a turn's items of an event in one record, in order, with one marker naming it", async () => {
    groups.length = 0;
    const e1 = Array.from({ length: 200 }, (_, i) => store.outbox.put(item("E1", i)));
    const e2 = Array.from({ length: 50 }, (_, i) => store.outbox.put(item("E2", i)));
    const ids1 = await Promise.all(e1);
    const ids2 = await Promise.all(e2);

    const written = groups.flat();
    expect(written.filter((k) => k === "outbox-work:T1:E1")).toHaveLength(1);
    expect(written.filter((k) => k === "outbox-work:T1:E2")).toHaveLength(1);
    // Five records for 250 messages (at most 64 each), none of the one-item kind.
    expect(written.filter((k) => k.startsWith("outbox-batch:"))).toHaveLength(5);
    expect(written.filter((k) => k.startsWith("outbox:"))).toEqual([]);
    // The marker shares a group commit with its record.
    const withMark = groups.find((g) => g.includes("outbox-work:T1:E1"));
    expect(withMark?.some((k) => k.startsWith("outbox-batch:T1:E1:"))).toBe(true);

    // Each caller has its own id: the record's, and its place in it.
    expect(ids1.map((id) => id.slice(id.lastIndexOf("/") + 1))).toEqual(
      ids1.map((_, i) => String(i % 64)),
    );
    const marks = new Map((await store.outbox.work()).map((m) => [m.eventId, m]));
    expect(marks.get("E1")?.last).toBe(recordOf(ids1.at(-1)!));
    expect(marks.get("E2")?.last).toBe(recordOf(ids2[0]!));

    const listed = await store.outbox.listEvent("T1", "E1", 1_000);
    expect(listed.map((r) => r.id)).toEqual(ids1);
    expect(listed.map((r) => (r.item.message as { i: number }).i)).toEqual([...Array(200).keys()]);
    // 200 in one turn: four records (64, 64, 64, 8), in order.
    expect([...new Set(listed.map((r) => r.key))]).toEqual(
      [...new Set(ids1.map(recordOf))].map((r) => `outbox-batch:${r}`),
    );
    expect(new Set(ids1.map(recordOf)).size).toBe(4);
    expect(await store.outbox.get(ids1[7]!)).toEqual(item("E1", 7));
    expect(await store.outbox.listEvent("T1", "E2", 1_000)).toHaveLength(50);
  });

  it("closes a record at 64 items and names the newest in the marker", async () => {
    groups.length = 0;
    const ids = await Promise.all(
      Array.from({ length: 150 }, (_, i) => store.outbox.put(item("E3", i))),
    );
    const records = [...new Set(ids.map(recordOf))];
    expect(records.map((r) => ids.filter((id) => recordOf(id) === r).length)).toEqual([64, 64, 22]);
    expect((await store.outbox.work()).find((m) => m.eventId === "E3")?.last).toBe(records[2]);
    expect((await store.outbox.listEvent("T1", "E3")).map((r) => r.id)).toEqual(ids);
    // `limit` counts items, in whole records: one record for 1, two for 65.
    expect(await store.outbox.listEvent("T1", "E3", 1)).toHaveLength(64);
    expect(await store.outbox.listEvent("T1", "E3", 64)).toHaveLength(64);
    expect(await store.outbox.listEvent("T1", "E3", 65)).toHaveLength(128);
  });

  it("moves on with an item of a later turn", async () => {
    const before = (await store.outbox.work()).find((m) => m.eventId === "E1");
    const next = await store.outbox.put(item("E1", 1_000));
    const after = (await store.outbox.work()).find((m) => m.eventId === "E1");
    expect(after?.last).toBe(recordOf(next));
    expect(after?.last).not.toBe(before?.last);
    expect(recordOf(next) > (before?.last ?? "")).toBe(true);
  });

  it("refuses only the caller of a bad item, and every caller of a record not stored", async () => {
    const bad = { ...item("E4", 1), receivedAt: "yesterday" as unknown as number };
    const turn = [
      store.outbox.put(item("E4", 0)),
      store.outbox.put(bad),
      store.outbox.put(item("E4", 2)),
    ];
    const [a, b, c] = await Promise.allSettled(turn);
    expect(a?.status).toBe("fulfilled");
    expect(b?.status).toBe("rejected");
    expect(c?.status).toBe("fulfilled");
    expect(
      (await store.outbox.listEvent("T1", "E4")).map((r) => (r.item.message as { i: number }).i),
    ).toEqual([0, 2]);

    failWrites = true;
    try {
      const lost = await Promise.allSettled(
        Array.from({ length: 5 }, (_, i) => store.outbox.put(item("E5", i))),
      );
      // None was stored, so none may be acknowledged.
      expect(lost.map((r) => r.status)).toEqual(Array(5).fill("rejected"));
    } finally {
      failWrites = false;
    }
    expect(await store.outbox.listEvent("T1", "E5")).toEqual([]);
  });

  it("lists an event's items of earlier versions and its batches as one list in order", async () => {
    // One record per item, as the previous version keyed them per event.
    const old = store.repository(outboxRepo);
    const oldId = `T1:E6:${timeOrderedId(Date.now() - 60_000)}`;
    await old.put(oldId, item("E6", 0));
    const newer = await Promise.all([
      store.outbox.put(item("E6", 1)),
      store.outbox.put(item("E6", 2)),
    ]);
    const newest = `T1:E6:${timeOrderedId(Date.now() + 60_000)}`;
    await old.put(newest, item("E6", 3));

    const listed = await store.outbox.listEvent("T1", "E6");
    expect(listed.map((r) => r.id)).toEqual([oldId, ...newer, newest]);
    expect(listed.map((r) => r.key)).toEqual([
      `outbox:${oldId}`,
      `outbox-batch:${recordOf(newer[0]!)}`,
      `outbox-batch:${recordOf(newer[0]!)}`,
      `outbox:${newest}`,
    ]);
    // Cut at one record of each kind: nothing after the earlier cut is passed over.
    expect((await store.outbox.listEvent("T1", "E6", 1)).map((r) => r.id)).toEqual([oldId]);
    expect((await store.outbox.listEvent("T1", "E6", 2)).map((r) => r.id)).toEqual([
      oldId,
      ...newer,
    ]);
    // The sweep's listing sees both kinds too.
    const all = await store.outbox.list();
    expect(all.filter((r) => r.item.eventId === "E6").map((r) => r.id)).toEqual(
      listed.map((r) => r.id),
    );
    expect(await store.repository(outboxBatchRepo).ids("T1:E6:")).toHaveLength(1);
  });

  it("leaves an item naming no event without a marker, as a record of its own", async () => {
    groups.length = 0;
    const { eventId: _none, ...noEvent } = item("E9", 1);
    const id = await store.outbox.put(noEvent);
    expect(groups.flat().filter((k) => k.startsWith("outbox-work:"))).toEqual([]);
    expect(groups.flat()).toEqual([`outbox:${id}`]);
  });

  it("stops at the batches' cut when an item of an earlier version comes after it", async () => {
    // Eight one-item batches, then an old item: a listing of 4 items reads 1 batch (4 / 4).
    const batchIds: string[] = [];
    for (let i = 0; i < 8; i++) batchIds.push(await store.outbox.put(item("E7", i)));
    const oldId = `T1:E7:${timeOrderedId(Date.now() + 60_000)}`;
    await store.repository(outboxRepo).put(oldId, item("E7", 99));
    const first = await store.outbox.listEvent("T1", "E7", 4);
    // Never the old item before the batches it follows.
    expect(first.map((r) => r.id)).toEqual(batchIds.slice(0, 1));
    expect((await store.outbox.listEvent("T1", "E7")).map((r) => r.id)).toEqual([
      ...batchIds,
      oldId,
    ]);
  });

  it("are removed with their workspace", async () => {
    await store.outbox.put({ ...item("E8", 1), team: "T8" });
    expect(await store.repository(outboxBatchRepo).ids("T8:")).toHaveLength(1);
    await store.deleteTeam("T8");
    expect(await store.repository(outboxBatchRepo).ids("T8:")).toEqual([]);
    expect(await store.outbox.listEvent("T8", "E8")).toEqual([]);
  });

  it("checks every item, one by one, as it is written and as it is read", async () => {
    const checks = vi.spyOn(OutboxItemSchema, "safeParse");
    try {
      await Promise.all(Array.from({ length: 10 }, (_, i) => store.outbox.put(item("E10", i))));
      expect(checks).toHaveBeenCalledTimes(10);
      checks.mockClear();
      expect(await store.outbox.listEvent("T1", "E10")).toHaveLength(10);
      expect(checks).toHaveBeenCalledTimes(10);
    } finally {
      checks.mockRestore();
    }
  });

  it("does not check a batch as a whole again when it is written, and reads one holding something that is not an item as corrupt", async () => {
    const id = `T1:E11:${timeOrderedId()}`;
    await store
      .repository(outboxBatchRepo)
      .put(id, { items: [item("E11", 1), { team: "T1", receivedAt: "never" }] });
    await expect(store.outbox.listEvent("T1", "E11")).rejects.toMatchObject({
      code: "store_corrupt",
      key: expect.stringContaining(`outbox-batch:${id}`),
    });
    await expect(store.outbox.get(`${id}/1`)).rejects.toMatchObject({ code: "store_corrupt" });
    expect(await store.outbox.get(`${id}/0`)).toEqual(item("E11", 1));
  });
});
