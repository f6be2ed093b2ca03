import { randomBytes, randomUUID } from "node:crypto";
import { join } from "node:path";
import { createClient } from "@redis/client";
import pg from "pg";
import sqlite3 from "sqlite3";
import { expect, it } from "vitest";
import { z } from "zod";
import { createCipher, defineRepository, openStore, StoreError } from "../../src/store/index.ts";
import {
  describeBackends,
  type NamedBackend,
  storesOfEachTest,
  suiteDir,
} from "../helpers/backends.ts";

/**
 * A listing given `unreadable` steps past a record it cannot read (stored text that is not a
 * value, a value that fails its schema, a secret no key opens), hands it over with its id, and
 * leaves it as it is; a listing without it throws, as before. On SQLite, Redis and Postgres, each
 * record spoiled with the backend's own driver.
 */

const cipher = createCipher(randomBytes(32));
const tmp = suiteDir("unreadable");

const noteRepo = defineRepository({
  prefix: "note",
  schema: z.object({ team: z.string(), secret: z.string() }),
  encryptedFields: ["secret"],
  team: { field: "team" },
});

interface Backend extends NamedBackend {
  /** Writes `text` as the stored text of `key` (under `ns:`), past the store. */
  spoil(url: string, key: string, text: string): Promise<void>;
}

const BACKENDS: Backend[] = [
  {
    name: "sqlite",
    url: () => `sqlite://${join(tmp(), `${randomUUID()}.sqlite`)}`,
    spoil: (url, key, text) =>
      new Promise((resolve, reject) => {
        const db = new sqlite3.Database(url.slice("sqlite://".length), (open) => {
          if (open) return reject(open);
          db.run("UPDATE keyv SET value = ? WHERE key = ?", [text, key], function (this, e) {
            const changes = this?.changes;
            db.close();
            if (e) reject(e);
            else if (changes !== 1) reject(new Error(`no row ${key}`));
            else resolve();
          });
        });
      }),
  },
  {
    name: "redis",
    url: process.env.TEST_REDIS_URL ? () => process.env.TEST_REDIS_URL! : undefined,
    async spoil(url, key, text) {
      const c = createClient({ url });
      await c.connect();
      try {
        if ((await c.set(key, text, { XX: true })) !== "OK") throw new Error(`no key ${key}`);
      } finally {
        c.destroy();
      }
    },
  },
  {
    name: "postgres",
    url: process.env.TEST_POSTGRES_URL ? () => process.env.TEST_POSTGRES_URL! : undefined,
    async spoil(url, key, text) {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        const r = await c.query("UPDATE keyv SET value = $1 WHERE key = $2", [text, key]);
        if (r.rowCount !== 1) throw new Error(`no row ${key}`);
      } finally {
        await c.end();
      }
    },
  },
];

describeBackends("unreadable records", BACKENDS, (backend) => {
  const { fresh } = storesOfEachTest(backend, { cipher, repositories: [noteRepo] });

  it("lists the event markers it can read, and hands over the ones it cannot", async () => {
    const { store, url, ns } = await fresh();
    for (const e of ["E1", "E2", "E3", "E4"]) await store.outbox.markWork("T1", e, `T1:${e}:1`);
    const notJson = "this is not a value {";
    await backend.spoil(url, `${ns}:outbox-work:T1:E2`, notJson);
    // Its schema says `last` is a non-empty string.
    await store.set("outbox-work:T1:E3", { last: 7, at: Date.now() });

    // Without a taker, as before: the listing fails, naming the first bad key.
    const strict = await store.outbox.work().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(strict).toBeInstanceOf(StoreError);
    expect((strict as StoreError).code).toBe("store_corrupt");

    const handed: Array<[string, string]> = [];
    const marks = await store.outbox.work((id, err) => handed.push([id, err.code]));
    expect(marks.map((m) => m.eventId)).toEqual(["E1", "E4"]);
    expect(handed).toEqual([
      ["T1:E2", "store_corrupt"],
      ["T1:E3", "store_corrupt"],
    ]);
    // Left as they were.
    expect(await store.get("outbox-work:T1:E3")).toEqual({ last: 7, at: expect.any(Number) });
    await store.outbox.markWork("T1", "E2", "T1:E2:2");
    expect((await store.outbox.work(() => {})).map((m) => m.eventId)).toEqual(["E1", "E2", "E4"]);
  });

  it("steps past a secret no key opens, and lists the rest in order", async () => {
    const { store } = await fresh();
    const notes = store.repository(noteRepo);
    for (const id of ["a", "b", "c"]) await notes.put(id, { team: "T1", secret: `s-${id}` });
    // A ciphertext moved to another key does not open there.
    await store.set("note:b", await store.get("note:a"));

    await expect(notes.list()).rejects.toMatchObject({ code: "store_corrupt" });
    const handed: string[] = [];
    const rows = await notes.list("", { unreadable: (id) => handed.push(id) });
    expect(rows).toEqual([
      { id: "a", value: { team: "T1", secret: "s-a" } },
      { id: "c", value: { team: "T1", secret: "s-c" } },
    ]);
    expect(handed).toEqual(["b"]);
    // A store outage is not an unreadable record: it still fails the listing.
    await store.close();
    await expect(notes.list("", { unreadable: () => {} })).rejects.toMatchObject({
      code: "store_closed",
    });
  });
});

describeBackends(
  "a listing that meets a store failure partway",
  BACKENDS.filter((b) => b.name === "postgres"),
  (backend) => {
    const previousKey = randomBytes(32);
    const { fresh, track } = storesOfEachTest(backend, {
      cipher: createCipher(previousKey),
      repositories: [noteRepo],
    });

    it("fails, and hands nothing over as unreadable", async () => {
      const { store, url, ns } = await fresh();
      for (const id of ["a", "b"]) {
        await store.repository(noteRepo).put(id, { team: "T1", secret: `s-${id}` });
      }
      // Read under a new key, "a" is sealed again as it is listed (a compare-and-set), which
      // waits on a row lock another connection holds, past the store's 2 s bound.
      const rekeyed = createCipher(randomBytes(32), [previousKey]);
      const next = await openStore(url, {
        cipher: rekeyed,
        namespace: ns,
        sweepIntervalMs: 0,
        repositories: [noteRepo],
      });
      const locker = new pg.Client({ connectionString: url });
      await locker.connect();
      try {
        await locker.query("BEGIN");
        const locked = await locker.query("SELECT 1 FROM keyv WHERE key = $1 FOR UPDATE", [
          `${ns}:note:a`,
        ]);
        expect(locked.rowCount).toBe(1);
        const handed: string[] = [];
        const err = await next
          .repository(noteRepo)
          .list("", { unreadable: (id) => handed.push(id) })
          .then(
            () => undefined,
            (e: unknown) => e,
          );
        expect(err).toBeInstanceOf(StoreError);
        expect(["store_timeout", "store_unavailable"]).toContain((err as StoreError).code);
        expect(handed).toEqual([]);
      } finally {
        await locker.query("ROLLBACK").catch(() => undefined);
        await locker.end();
        await next.close();
      }
      // Nothing lost or altered: both read as they were written. The re-seal that waited on the
      // lock may still land once the lock is let go (Postgres runs the statement our 2 s bound
      // gave up on), leaving "a" sealed under the new key, so read with a store that knows both.
      const reader = track(
        await openStore(url, {
          cipher: rekeyed,
          namespace: ns,
          sweepIntervalMs: 0,
          repositories: [noteRepo],
        }),
      );
      expect((await reader.repository(noteRepo).list()).map((r) => r.value.secret)).toEqual([
        "s-a",
        "s-b",
      ]);
    });
  },
);
