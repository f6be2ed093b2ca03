import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KeyvEntry } from "keyv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCipher, openStore, type Store } from "../../src/store/index.ts";

/**
 * The outbox marker of an event (`outbox-work:{team}:{eventId}`) is written once for every item
 * stored in the same turn of the event loop, naming the newest of them, in the same group
 * commit as those items; a later turn's item moves it on. On a real SQLite file, counting what
 * reaches the store's keyv adapter.
 */
describe("the outbox marker, once per event per turn", () => {
  const dir = mkdtempSync(join(tmpdir(), "onair-marker-"));
  let store: Store;
  /** Entries of each group write that reached the adapter, by key. */
  const groups: string[][] = [];
  beforeAll(async () => {
    store = await openStore(`sqlite://${join(dir, "s.sqlite")}`, {
      cipher: createCipher(randomBytes(32)),
      sweepIntervalMs: 0,
    });
    const adapter = store.keyv.store as { setMany(e: KeyvEntry[]): Promise<unknown> };
    const setMany = adapter.setMany.bind(adapter);
    adapter.setMany = (entries) => {
      groups.push(entries.map((e) => e.key));
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

  it("is written once for a turn's items, naming the newest, in their group", async () => {
    groups.length = 0;
    const e1 = Array.from({ length: 200 }, (_, i) => store.outbox.put(item("E1", i)));
    const e2 = Array.from({ length: 50 }, (_, i) => store.outbox.put(item("E2", i)));
    const ids1 = await Promise.all(e1);
    const ids2 = await Promise.all(e2);

    const written = groups.flat();
    expect(written.filter((k) => k === "outbox-work:T1:E1")).toHaveLength(1);
    expect(written.filter((k) => k === "outbox-work:T1:E2")).toHaveLength(1);
    expect(written.filter((k) => k.startsWith("outbox:"))).toHaveLength(250);
    // The marker shares a group commit with items of its event.
    const withMark = groups.find((g) => g.includes("outbox-work:T1:E1"));
    expect(withMark?.some((k) => k.startsWith("outbox:T1:E1:"))).toBe(true);

    const marks = await store.outbox.work();
    const byEvent = new Map(marks.map((m) => [m.eventId, m]));
    expect(byEvent.get("E1")?.last).toBe([...ids1].sort().at(-1));
    expect(byEvent.get("E2")?.last).toBe([...ids2].sort().at(-1));
    // Every item is stored.
    expect(await store.outbox.listEvent("T1", "E1", 1_000)).toHaveLength(200);
    expect(await store.outbox.listEvent("T1", "E2", 1_000)).toHaveLength(50);
  });

  it("moves on with an item of a later turn", async () => {
    const before = (await store.outbox.work()).find((m) => m.eventId === "E1");
    const next = await store.outbox.put(item("E1", 1_000));
    const after = (await store.outbox.work()).find((m) => m.eventId === "E1");
    expect(after?.last).toBe(next);
    expect(after?.last).not.toBe(before?.last);
    expect(next > (before?.last ?? "")).toBe(true);
  });

  it("leaves an item naming no event without a marker", async () => {
    groups.length = 0;
    const { eventId: _none, ...noEvent } = item("E9", 1);
    await store.outbox.put(noEvent);
    expect(groups.flat().filter((k) => k.startsWith("outbox-work:"))).toEqual([]);
  });
});
