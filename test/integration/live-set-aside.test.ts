import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sqlite3 from "sqlite3";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { LIVE_REPOSITORIES } from "../../src/live/live-record.ts";
import { entryOf } from "../../src/live/outbox-entry.ts";
import { HELD_TTL_MS, heldRepo, readableHeld, setAside } from "../../src/live/set-aside.ts";
import {
  createCipher,
  openStore,
  outboxRepo,
  STORE_ERROR_CODES,
  StoreError,
  timeOrderedId,
} from "../../src/store/index.ts";
import { eventually } from "../helpers/live-fixtures.ts";
import { capturedLogs } from "../helpers/log-lines.ts";
import { engineSuite, joinItem, subscribeEvent } from "../helpers/outbox-items.ts";

/**
 * An outbox item whose message this version does not read (a newer version accepted a kind of
 * message this one does not know, during a rolling deploy) is set aside, not removed with its
 * record: the event's other items go on, and an engine of a version that reads it applies it at
 * its sweep. On a real SQLite file.
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
    // An earlier version's item, keyed by sequence alone.
    const seq = timeOrderedId();
    await suite.store.repository(outboxRepo).put(seq, newerKind("E1"));
    const e = start();
    await drained("E1", "E1's record drained");
    await eventually(
      async () => ((await suite.store.outbox.listLegacy()).length === 0 ? true : undefined),
      "the earlier version's item drained",
      5_000,
    );
    expect((await e.figures("T1", "E1"))?.unique).toBe(2);
    // Kept under the item's own id, as the route stored it; the earlier one under its event.
    const kept = await held().list("T1:E1:");
    expect(kept.map((r) => r.id).sort()).toEqual([ids[1], `T1:E1:${seq}`].sort());
    for (const k of kept) {
      expect(k.value.item).toEqual(newerKind("E1"));
      expect(k.value.at).toBeGreaterThanOrEqual(before);
    }
    const warned = logged("were set aside");
    expect(warned).toHaveLength(2);
    expect(warned.map((w) => w.items)).toEqual([1, 1]);
    expect(logged("could not be set aside")).toEqual([]);
    await suite.store.deleteMany(kept.map((k) => held().key(k.id)));
  });

  it("applies at its sweep one this version reads, with no other item of the event, and keeps one it cannot", async () => {
    await subscribeEvent(suite.store, "E2");
    // Set aside by another version: one item this version reads, one it does not. Nothing else
    // of the event comes (its last message was of the new kind).
    const readableId = `T1:E2:${timeOrderedId()}/0`;
    const unreadId = `T1:E2:${timeOrderedId()}/1`;
    await held().put(readableId, { item: joinItem("E2", 7), at: Date.now() });
    await held().put(unreadId, { item: newerKind("E2"), at: Date.now() });
    const e = start({ sweepMs: 100 });
    await eventually(
      async () => ((await held().list("T1:E2:")).length === 1 ? true : undefined),
      "the readable one applied and removed",
      5_000,
    );
    expect((await held().list("T1:E2:")).map((r) => r.id)).toEqual([unreadId]);
    expect((await e.figures("T1", "E2"))?.unique).toBe(1);
    const applied = logged("applied outbox items set aside earlier");
    expect(applied).toHaveLength(1);
    expect(applied[0]).toMatchObject({ event: "E2", applied: 1, unread: 1 });
    // Later sweeps apply nothing again, and set nothing aside.
    await new Promise((r) => setTimeout(r, 400));
    expect(logged("applied outbox items set aside earlier")).toHaveLength(1);
    expect(logged("were set aside")).toHaveLength(0);
    expect((await held().list("T1:E2:")).map((r) => r.id)).toEqual([unreadId]);
  });

  /**
   * Two events' held items in one page, the store down `times` in a row as the first one's
   * applied items are removed (the sweep stops there, the second not yet looked at). Where each
   * sweep's listing of held records started (its cursor), and the page's last id.
   */
  async function cutShort(times: number, [a, b]: [string, string]) {
    await subscribeEvent(suite.store, a);
    await subscribeEvent(suite.store, b);
    const ids = [a, b].map((e) => `T1:${e}:${timeOrderedId()}/0`);
    for (const [i, id] of ids.entries()) {
      await held().put(id, { item: joinItem(i === 0 ? a : b, 1), at: Date.now() });
    }
    const lastListed = (await held().list(""))
      .map((r) => r.id)
      .sort()
      .at(-1);
    const afters: Array<string | undefined> = [];
    const repository = suite.store.repository;
    suite.store.repository = ((def: unknown) => {
      const repo = repository.call(suite.store, def as typeof heldRepo);
      if (def !== heldRepo) return repo;
      const list = repo.list.bind(repo);
      repo.list = (prefix, o) => {
        // The sweep's listing is the one of every held record.
        if (prefix === "") afters.push(o?.after);
        return list(prefix, o);
      };
      return repo;
    }) as typeof repository;
    const deleteMany = suite.store.deleteMany;
    let failed = 0;
    suite.store.deleteMany = (keys) => {
      if (failed < times && keys.some((k) => k === held().key(ids[0] ?? ""))) {
        failed++;
        return Promise.reject(
          new StoreError(STORE_ERROR_CODES.unavailable, "delete", "test", undefined, "down"),
        );
      }
      return deleteMany.call(suite.store, keys);
    };
    try {
      const e = start({ sweepMs: 100 });
      await eventually(
        async () => ((await held().list("T1:")).some((r) => ids.includes(r.id)) ? undefined : true),
        "both events' held items applied and removed",
        5_000,
      );
      expect(failed).toBe(times);
      expect((await e.figures("T1", a))?.unique).toBe(1);
      expect((await e.figures("T1", b))?.unique).toBe(1);
      return { afters, lastListed };
    } finally {
      suite.store.repository = repository;
      suite.store.deleteMany = deleteMany;
    }
  }

  it("reads the same page again at the next sweep when the store fails partway through it", async () => {
    const { afters } = await cutShort(1, ["E3", "E4"]);
    // The first sweep read from the start; the failed one did not move the cursor on, so the
    // next read the same page (E4 with it) rather than what comes after it.
    expect(afters.slice(0, 2)).toEqual([undefined, undefined]);
  });

  it("steps past a page the store cuts short twice in a row from the same place", async () => {
    // An event whose replay fails the store every time must not hold back the records after it.
    const { afters, lastListed } = await cutShort(2, ["E6", "E7"]);
    expect(lastListed).toBeDefined();
    expect(afters.slice(0, 3)).toEqual([undefined, undefined, lastListed]);
  });

  it("keeps an item's record while setting it aside fails, and sets it aside once it can", async () => {
    await subscribeEvent(suite.store, "E5");
    // A real store fault of one kind of write: every write of a held record fails, nothing else.
    const prefix = held().key("T1:E5:x").slice(0, -1);
    await execSql(
      suite.path,
      `CREATE TRIGGER no_held BEFORE INSERT ON keyv WHEN NEW.key LIKE '${prefix}%'
        BEGIN SELECT RAISE(ABORT, 'held records refused by the test'); END;`,
    );
    try {
      const id = await suite.store.outbox.put(newerKind("E5"));
      await suite.store.outbox.put(joinItem("E5", 1));
      const e = start();
      await eventually(
        () =>
          lines.some((l) => JSON.stringify(l).includes("held records refused")) ? true : undefined,
        "the set-aside refused by the store",
        5_000,
      );
      // Applied, but nothing removed: the unreadable item is still where the route stored it.
      await e.settled();
      expect((await suite.store.outbox.listEvent("T1", "E5")).map((r) => r.id)).toContain(id);
      expect(await held().list("T1:E5:")).toEqual([]);
      await execSql(suite.path, "DROP TRIGGER no_held");
      await drained("E5", "E5 drained once held records can be written");
      expect((await held().list("T1:E5:")).map((r) => r.id)).toEqual([id]);
      expect((await e.figures("T1", "E5"))?.unique).toBe(1);
    } finally {
      await execSql(suite.path, "DROP TRIGGER IF EXISTS no_held");
    }
  });
});

/** Runs `sql` on the SQLite file with the driver: a fault the test puts in the store. */
function execSql(path: string, sql: string): Promise<void> {
  const db = new sqlite3.Database(path);
  return new Promise<void>((resolve, reject) =>
    db.exec(sql, (err) => (err ? reject(err) : resolve())),
  ).finally(() => db.close());
}

/** A record's stored text, read with the driver (the store's namespace is none here). */
function rawValue(path: string, key: string): Promise<string> {
  const db = new sqlite3.Database(path, sqlite3.OPEN_READONLY);
  return new Promise<string>((resolve, reject) =>
    db.get<{ value: string }>("SELECT value FROM keyv WHERE key = ?", [key], (err, row) =>
      err || !row ? reject(err ?? new Error(`no row ${key}`)) : resolve(row.value),
    ),
  ).finally(() => db.close());
}

describe("items set aside, in the store", () => {
  const dir = mkdtempSync(join(tmpdir(), "onair-set-aside-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const open = (path = join(dir, `${timeOrderedId()}.sqlite`)) =>
    openStore(`sqlite://${path}`, {
      cipher: createCipher(randomBytes(32)),
      sweepIntervalMs: 0,
      repositories: LIVE_REPOSITORIES,
    });
  const entry = (id: string, team = "T1") => {
    const item = { ...joinItem("E1", 1), team, message: { type: "SOMETHING_NEW" } };
    const e = entryOf({ id, item, record: id, key: `outbox-batch:${id}` });
    expect(e.kind).toBe("unreadable");
    return e;
  };

  it("expire, a week on by default", async () => {
    const path = join(dir, `${timeOrderedId()}.sqlite`);
    const store = await open(path);
    try {
      const held = store.repository(heldRepo);
      const id = `T1:E1:${timeOrderedId()}/0`;
      expect(await setAside(held, [entry(id)], { ttlMs: 300 })).toEqual({
        unread: 1,
        refused: 0,
        dropped: [],
      });
      expect(await held.get(id)).toBeDefined();
      await new Promise((r) => setTimeout(r, 500));
      expect(await held.get(id)).toBeUndefined();
      // The default: the record's expiry, as stored, a week after it was set aside.
      const id2 = `T1:E1:${timeOrderedId()}/0`;
      const before = Date.now();
      await setAside(held, [entry(id2)]);
      const stored = JSON.parse(await rawValue(path, held.key(id2))) as { expires?: number };
      expect(stored.expires).toBeGreaterThanOrEqual(before + HELD_TTL_MS);
      expect(stored.expires).toBeLessThanOrEqual(Date.now() + HELD_TTL_MS);
    } finally {
      await store.close();
    }
  });

  it("are read a page a sweep, on from where the last sweep stopped, and round again", async () => {
    const store = await open();
    try {
      const held = store.repository(heldRepo);
      const ids = [1, 2, 3, 4, 5].map((n) => `T1:E${n}:${timeOrderedId()}/0`);
      for (const [n, id] of ids.entries()) {
        await held.put(id, { item: joinItem(`E${n + 1}`, n), at: Date.now() });
      }
      // Expired, not purged yet: left out of a page uncounted, which must not end the round.
      await held.put(`T1:E0:${timeOrderedId()}/0`, { item: joinItem("E0", 9), at: 0 }, 50);
      await new Promise((r) => setTimeout(r, 100));
      const pages: string[][] = [];
      let after: string | undefined;
      for (let i = 0; i < 6; i++) {
        const page = await readableHeld(held, after, 2);
        pages.push(page.events.flatMap((e) => e.entries.map((x) => x.id)));
        after = page.next;
      }
      // The expired one first (E0): its page holds one record, and the round goes on.
      expect(pages).toEqual([
        ids.slice(0, 1),
        ids.slice(1, 3),
        ids.slice(3, 5),
        [],
        ids.slice(0, 1),
        ids.slice(1, 3),
      ]);
    } finally {
      await store.close();
    }
  });

  it("go with the team's data on uninstall", async () => {
    const store = await open();
    try {
      const held = store.repository(heldRepo);
      await setAside(held, [entry(`T1:E1:${timeOrderedId()}/0`), entry(timeOrderedId())]);
      await setAside(held, [entry(`T2:E1:${timeOrderedId()}/0`, "T2")]);
      expect(await held.list("T1:")).toHaveLength(2);
      expect(await store.deleteTeam("T1")).toBeGreaterThanOrEqual(2);
      expect(await held.list("T1:")).toEqual([]);
      expect(await held.list("T2:")).toHaveLength(1);
    } finally {
      await store.close();
    }
  });

  it("drops, and says so, one whose ids make no key", async () => {
    const store = await open();
    try {
      const held = store.repository(heldRepo);
      const long = `T1:E1:${"x".repeat(300)}`;
      // An earlier version's item, keyed by sequence alone, whose event id holds a ":".
      const seq = timeOrderedId();
      const colon = entryOf({
        id: seq,
        item: { ...joinItem("E:1", 1), message: { type: "SOMETHING_NEW" } },
        record: seq,
        key: `outbox:${seq}`,
      });
      const r = await setAside(held, [entry(long), colon]);
      expect(r.unread + r.refused).toBe(0);
      expect(r.dropped.map((d) => d.id).sort()).toEqual([long, seq].sort());
      for (const d of r.dropped) expect(d.reason).not.toBe("");
      expect(await held.list("")).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
