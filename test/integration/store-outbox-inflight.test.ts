import { randomBytes } from "node:crypto";
import type { KeyvEntry } from "keyv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POSTGRES_WRITES_IN_FLIGHT } from "../../src/store/backends/postgres.ts";
import { createCipher, openStore, type Store } from "../../src/store/index.ts";

/**
 * On Postgres the store keeps a few groups in flight (POSTGRES_WRITES_IN_FLIGHT), and an event's
 * marker (`outbox-work:{team}:{eventId}`) is written again with each of its records. The marker
 * does not wait for its last write still in flight: each record commits in one group with a
 * marker naming it, whichever of them lands last, and the engine finds every record. A write of
 * any other key still waits for its last one (the later value lands last). On the real server,
 * with each group held in the store's keyv adapter (as a slow commit would be) until the test
 * lets them go.
 */

const REQUIRE = process.env.ONAIR_REQUIRE_SERVICES === "1";
const url = process.env.TEST_POSTGRES_URL;

describe("the outbox's marker beside its last write still in flight, on Postgres", () => {
  let store: Store | undefined;
  /** The keys of each group that reached the adapter, without the namespace. */
  const groups: string[][] = [];
  let hold: Promise<void> | undefined;
  let release = () => {};
  const ns = `inflight${Date.now()}`;
  beforeAll(async () => {
    if (!url) return;
    store = await openStore(url, {
      cipher: createCipher(randomBytes(32)),
      namespace: ns,
      sweepIntervalMs: 0,
    });
    const adapter = store.keyv.store as { setMany(e: KeyvEntry[]): Promise<unknown> };
    const setMany = adapter.setMany.bind(adapter);
    adapter.setMany = async (entries) => {
      groups.push(entries.map((e) => e.key.slice(ns.length + 1)).sort());
      if (hold) await hold;
      return setMany(entries);
    };
  });
  afterAll(async () => {
    release();
    await store?.deletePrefix("");
    await store?.close();
  });
  const holdGroups = () => {
    groups.length = 0;
    hold = new Promise<void>((r) => {
      release = () => {
        hold = undefined;
        r();
      };
    });
  };
  /** A turn of the event loop, and the one after: a batch goes out in its own group. */
  const nextTurn = () => new Promise((r) => setImmediate(() => setImmediate(r)));
  const item = (i: number) => ({
    team: "T1",
    subscriptionId: "sub-1",
    eventId: "E1",
    receivedAt: i,
    message: { i },
  });
  const recordOf = (id: string) => id.slice(0, id.lastIndexOf("/"));

  it("sends each record with a marker naming it while the event's earlier groups are in flight", async () => {
    if (!store) {
      expect(REQUIRE).toBe(false);
      return;
    }
    expect(POSTGRES_WRITES_IN_FLIGHT).toBeGreaterThanOrEqual(3);
    holdGroups();
    const puts: Array<Promise<string>> = [];
    for (let i = 0; i < 3; i++) {
      puts.push(store.outbox.put(item(i)));
      await nextTurn();
    }
    // Three groups in flight at once, none answered: each holds its record and the marker.
    expect(groups).toHaveLength(3);
    for (const g of groups) {
      expect(g).toHaveLength(2);
      expect(g[0]).toMatch(/^outbox-batch:T1:E1:/);
      expect(g[1]).toBe("outbox-work:T1:E1");
    }
    let answered = 0;
    for (const p of puts) void p.then(() => answered++);
    await nextTurn();
    expect(answered).toBe(0);
    release();
    const ids = await Promise.all(puts);
    // Nothing more was written: no marker went out in a group of its own.
    expect(groups).toHaveLength(3);
    expect(groups.map((g) => g[0])).toEqual(ids.map((id) => `outbox-batch:${recordOf(id)}`));

    // Whichever landed last, the marker names one of them and the listing holds all three.
    const [mark] = await store.outbox.work();
    expect(ids.map(recordOf)).toContain(mark?.last);
    const listed = await store.outbox.listEvent("T1", "E1");
    expect(listed.map((r) => r.id)).toEqual(ids);
    // Cleared only while it still holds what was read.
    if (!mark) throw new Error("no marker");
    expect(await store.outbox.settle({ ...mark, at: mark.at + 1 })).toBe(false);
    expect(await store.outbox.settle(mark)).toBe(true);
    // Settled by expiring at once (a millisecond's TTL).
    await new Promise((r) => setTimeout(r, 5));
    expect(await store.outbox.work()).toEqual([]);
    await store.deletePrefix("outbox-batch:");
  });

  it("still sends any other key's write only after its last one has committed, the later value last", async () => {
    if (!store) {
      expect(REQUIRE).toBe(false);
      return;
    }
    holdGroups();
    const first = store.set("plain:k", 1);
    await nextTurn();
    const second = store.set("plain:k", 2);
    await nextTurn();
    expect(groups).toEqual([["plain:k"]]);
    release();
    await Promise.all([first, second]);
    expect(groups).toEqual([["plain:k"], ["plain:k"]]);
    expect(await store.get("plain:k")).toBe(2);
  });
});
