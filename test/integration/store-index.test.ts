import { randomBytes, randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@redis/client";
import pg from "pg";
import sqlite3 from "sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresScanSql } from "../../src/store/backends/postgres.ts";
import { redisIndexKeys } from "../../src/store/backends/redis.ts";
import { sqliteScanSql } from "../../src/store/backends/sqlite.ts";
import { createCipher, openStore, type Store } from "../../src/store/index.ts";
import { HAVE_REDIS_SERVER, type OwnServer, startRedisServer } from "../helpers/servers.ts";

/**
 * Listings served by an index on every backend, never by reading the whole keyspace:
 * Redis through its own sorted sets (no SCAN, whatever else the database holds; dead entries
 * leave the index), Postgres and SQLite through an index range (their EXPLAIN plans).
 */

const REQUIRE = process.env.ONAIR_REQUIRE_SERVICES === "1";
const cipher = createCipher(randomBytes(32));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const nsOf = () => `ix${randomUUID().replaceAll("-", "").slice(0, 10)}`;
const envelope = (value: unknown) => JSON.stringify({ value });

describe.skipIf(!HAVE_REDIS_SERVER && !REQUIRE)("store on Redis: the index", () => {
  let redis: OwnServer;
  let raw: ReturnType<typeof createClient>;
  const stores: Store[] = [];
  const open = async (ns: string) => {
    const s = await openStore(redis.url, { cipher, namespace: ns, sweepIntervalMs: 0 });
    stores.push(s);
    return s;
  };

  beforeAll(async () => {
    redis = await startRedisServer();
    raw = createClient({ url: redis.url });
    await raw.connect();
  }, 30_000);
  afterAll(async () => {
    for (const s of stores) await s.close().catch(() => undefined);
    raw?.destroy();
    await redis?.stop();
  });

  /** Calls per command since the last reset, from INFO commandstats. */
  async function commandCalls(): Promise<Record<string, number>> {
    const info = String(await raw.info("commandstats"));
    const out: Record<string, number> = {};
    for (const m of info.matchAll(/^cmdstat_([a-z|_-]+):calls=(\d+)/gm)) {
      out[m[1]!] = Number(m[2]);
    }
    return out;
  }

  it("lists, deletes and uninstalls without SCAN or KEYS, among 20,000 unrelated keys", async () => {
    const ns = nsOf();
    const store = await open(ns);
    // Unrelated keys: another application's, and keys that look like ours in another namespace.
    for (let i = 0; i < 20_000; i += 1_000) {
      const m = raw.multi();
      for (let j = i; j < i + 1_000; j++) m.set(j % 2 ? `other-app:${j}` : `zz:user:T1:${j}`, "x");
      await m.exec();
    }
    await store.users.put("T1", "U1", { email: "a@example.com", userId: 1, enterpriseId: 1 });
    await store.users.put("T1", "U2", { email: "b@example.com", userId: 2, enterpriseId: 1 });
    await store.users.put("T10", "U1", { email: "c@example.com", userId: 3, enterpriseId: 1 });
    for (let i = 0; i < 5; i++) {
      await store.outbox.put({ team: "T1", subscriptionId: "s", receivedAt: i, message: { i } });
    }
    await raw.configResetStat();

    expect((await store.users.list("T1")).map((u) => u.slackUser)).toEqual(["U1", "U2"]);
    expect((await store.outbox.list(3)).map((o) => (o.item.message as { i: number }).i)).toEqual([
      0, 1, 2,
    ]);
    expect(await store.entries("user:T1", { reverse: true, limit: 1 })).toHaveLength(1);
    expect(await store.keys("user:T10:")).toEqual(["user:T10:U1"]);
    expect(await store.deletePrefix("user:T10:")).toBe(1);
    expect(await store.deleteTeam("T1")).toBe(7);
    expect(await store.keys("")).toEqual([]);
    await store.sweepExpired();

    const calls = await commandCalls();
    expect(calls.evalsha, "the listings ran").toBeGreaterThan(5);
    expect(calls.scan ?? 0).toBe(0);
    expect(calls.keys ?? 0).toBe(0);
    // The unrelated keys are untouched.
    expect(Number(await raw.dbSize())).toBeGreaterThanOrEqual(20_000);
  });

  it("drops an expired key from its index: when a listing meets it, and by the sweeper", async () => {
    const ns = nsOf();
    const store = await open(ns);
    const { index, expiry } = redisIndexKeys(`${ns}:`);
    await store.set("tok:a", 1, 30);
    await store.set("tok:b", 2, 30);
    await store.set("tok:c", 3);
    expect(await raw.zCard(index)).toBe(3);
    expect(await raw.zCard(expiry)).toBe(2);
    await sleep(80);

    expect(await store.keys("tok:a")).toEqual([]);
    expect(await raw.zScore(index, `${ns}:tok:a`)).toBeNull();
    expect(await raw.zScore(index, `${ns}:tok:b`), "not met by a listing yet").not.toBeNull();

    expect(await store.sweepExpired()).toBe(1);
    expect(await raw.zRange(index, 0, -1)).toEqual([`${ns}:tok:c`]);
    expect(await raw.zCard(expiry)).toBe(0);
    expect(await store.keys("tok:")).toEqual(["tok:c"]);

    // A TTL'd key written again without one leaves the expiry set; deleted, the index.
    await store.set("tok:d", 4, 60_000);
    await store.set("tok:d", 5);
    expect(await raw.zCard(expiry)).toBe(0);
    expect(await store.delete("tok:d")).toBe(true);
    expect(await raw.zScore(index, `${ns}:tok:d`)).toBeNull();
    // A claim is indexed with its expiry, like any TTL'd write.
    expect(await store.claimOnce("lease:x", 60_000)).toBe(true);
    expect(await store.keys("lease:")).toEqual(["lease:x"]);
    expect(await raw.zScore(expiry, `${ns}:lease:x`)).not.toBeNull();
  });

  it("indexes data written before the index existed, once; keys written behind its back are not listed", async () => {
    const ns = nsOf();
    // As an earlier version (plain SET, keyv's envelope, native TTL) left them.
    await raw.set(`${ns}:install:T1`, envelope({ team: "T1" }));
    await raw.set(`${ns}:outbox:0001`, envelope({ n: 1 }));
    await raw.set(`${ns}:tok:T1:x`, envelope("t"), { PX: 60_000 });
    await raw.hSet(`${ns}:not-ours`, "f", "v");
    const store = await open(ns);
    expect(await store.keys("")).toEqual(["install:T1", "outbox:0001", "tok:T1:x"]);
    expect(await store.get("outbox:0001")).toEqual({ n: 1 });
    const { expiry, done } = redisIndexKeys(`${ns}:`);
    expect(await raw.zRange(expiry, 0, -1)).toEqual([`${ns}:tok:T1:x`]);
    expect(await raw.get(done)).toBe("1");

    // After that, listings read the index only: a key set by someone else is not found there.
    await raw.set(`${ns}:outbox:0002`, envelope({ n: 2 }));
    expect(await store.keys("outbox:")).toEqual(["outbox:0001"]);
    // A second instance opening the same namespace does not rebuild it.
    await raw.configResetStat();
    await open(ns);
    expect((await commandCalls()).scan ?? 0).toBe(0);
  });

  it("leaves nothing of a namespace once all of it is deleted", async () => {
    const ns = nsOf();
    const store = await open(ns);
    await store.set("a:1", 1);
    await store.set("b:1", 1, 60_000);
    expect(await store.deletePrefix("")).toBe(2);
    const left: string[] = [];
    for await (const keys of raw.scanIterator({ MATCH: `*${ns}*`, COUNT: 1000 })) {
      left.push(...keys.map(String));
    }
    expect(left).toEqual([]);
    await expect(store.set("~onair:index:x", 1)).rejects.toMatchObject({ code: "store_invalid" });
  });
});

describe.skipIf(!process.env.TEST_POSTGRES_URL && !REQUIRE)("store on Postgres: the index", () => {
  const url = () => {
    const u = process.env.TEST_POSTGRES_URL;
    if (!u) throw new Error("TEST_POSTGRES_URL is not set but ONAIR_REQUIRE_SERVICES=1");
    return u;
  };
  /** A schema of the test's own, first on the search_path of the URL returned. */
  async function inSchema(admin: pg.Client, setUp = ""): Promise<{ schema: string; url: string }> {
    const schema = `ix_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
    await admin.query(`CREATE SCHEMA ${schema}`);
    if (setUp) await admin.query(setUp.replaceAll("{schema}", schema));
    const u = new URL(url());
    u.searchParams.set("options", `-c search_path=${schema}`);
    return { schema, url: u.toString() };
  }
  /** The plans of the three listings, ascending, descending and after a key (the sweep's walk). */
  async function plans(schemaUrl: string): Promise<string[]> {
    const c = new pg.Client({ connectionString: schemaUrl });
    await c.connect();
    try {
      await c.query("BEGIN");
      // Only whether an index can serve it: a near-empty table would otherwise be read whole.
      await c.query("SET LOCAL enable_seqscan = off");
      const out: string[] = [];
      for (const [reverse, after] of [
        [false, false],
        [true, false],
        [false, true],
      ] as const) {
        const plan = await c.query<{ "QUERY PLAN": string }>(
          `EXPLAIN ${postgresScanSql(reverse, after)}`,
          ["ns:outbox:", "ns:outbox:\u{10FFFF}", 1000],
        );
        out.push(plan.rows.map((r) => r["QUERY PLAN"]).join("\n"));
      }
      return out;
    } finally {
      await c.query("ROLLBACK").catch(() => undefined);
      await c.end();
    }
  }
  const indexesOf = async (admin: pg.Client, schema: string) =>
    (
      await admin.query<{ indexname: string }>(
        "SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'keyv' ORDER BY 1",
        [schema],
      )
    ).rows.map((r) => r.indexname);
  let admin: pg.Client;
  const schemas: string[] = [];
  beforeAll(async () => {
    admin = new pg.Client({ connectionString: url() });
    await admin.connect();
  });
  afterAll(async () => {
    for (const s of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
    await admin?.end();
  });

  it("makes a new table's key byte-ordered, so its primary key alone serves prefix listings", async () => {
    const { schema, url: u } = await inSchema(admin);
    schemas.push(schema);
    const store = await openStore(u, { cipher, namespace: nsOf(), sweepIntervalMs: 0 });
    await store.set("a\u00e9", 1);
    await store.set("a\u{1F600}", 2);
    await store.set("aZ", 3);
    await store.set("b", 4);
    // Byte order (UTF-8), whatever the database's locale: "Z" < "é" < the emoji.
    expect(await store.keys("a")).toEqual(["aZ", "a\u00e9", "a\u{1F600}"]);
    await store.close();
    // The adapter's layout (key VARCHAR(255), value TEXT), its key in "C", and one index only.
    const cols = await admin.query<{
      column_name: string;
      data_type: string;
      collation_name: string | null;
    }>(
      "SELECT column_name, data_type, collation_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'keyv' ORDER BY ordinal_position",
      [schema],
    );
    expect(cols.rows).toEqual([
      { column_name: "key", data_type: "character varying", collation_name: "C" },
      { column_name: "value", data_type: "text", collation_name: null },
    ]);
    expect(await indexesOf(admin, schema)).toEqual(["keyv_pkey"]);
    for (const text of await plans(u)) {
      // A plain or bitmap index scan: which one depends on the planner's statistics of the moment.
      expect(text).toMatch(/Index (Only )?Scan( Backward)? (using|on) keyv_pkey/);
      expect(text).toContain("Index Cond");
      expect(text).not.toContain("Seq Scan");
    }
  });

  it('gives a table an earlier version made (in the database\'s collation) an index on key COLLATE "C"', async () => {
    const { schema, url: u } = await inSchema(
      admin,
      `CREATE TABLE {schema}.keyv(key VARCHAR(255) PRIMARY KEY, value TEXT);
       INSERT INTO {schema}.keyv(key, value) VALUES('old:one', '{"value":1}')`,
    );
    schemas.push(schema);
    const store = await openStore(u, { cipher, sweepIntervalMs: 0 });
    expect(await store.get("old:one")).toBe(1);
    await store.close();
    expect(await indexesOf(admin, schema)).toEqual(["keyv_key_c", "keyv_pkey"]);
    for (const text of await plans(u)) {
      expect(text).toMatch(/Index (Only )?Scan( Backward)? (using|on) keyv_key_c/);
      expect(text).toContain("Index Cond");
      expect(text).not.toContain("Seq Scan");
    }
  });
});

describe("store on SQLite: the index", () => {
  let dir = "";
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "onair-ix-"));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("serves a prefix listing with a range search on the primary key", async () => {
    const path = join(dir, "ix.sqlite");
    const store = await openStore(`sqlite://${path}`, { cipher, sweepIntervalMs: 0 });
    await store.close();
    const db = new sqlite3.Database(path, sqlite3.OPEN_READONLY);
    try {
      for (const [reverse, after] of [
        [false, false],
        [true, false],
        [false, true],
      ] as const) {
        const rows = await new Promise<Array<{ detail: string }>>((resolve, reject) =>
          db.all(
            `EXPLAIN QUERY PLAN ${sqliteScanSql(reverse, after)}`,
            ["outbox:", "outbox:\u{10FFFF}", -1],
            (err, r: Array<{ detail: string }>) => (err ? reject(err) : resolve(r)),
          ),
        );
        const text = rows.map((r) => r.detail).join("\n");
        expect(text).toContain("SEARCH keyv USING INDEX sqlite_autoindex_keyv_1 (key>? AND key<?)");
        expect(text).not.toMatch(/SCAN keyv/);
      }
    } finally {
      await new Promise<void>((r) => db.close(() => r()));
    }
  });
});
