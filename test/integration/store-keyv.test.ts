import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import KeyvPostgres from "@keyv/postgres";
import KeyvRedis from "@keyv/redis";
import KeyvSqlite from "@keyv/sqlite";
import { Keyv } from "keyv";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import type { OnAirKeyvAdapter } from "../../src/store/backends/keyv-adapter.ts";
import { createCipher, openStore, type Store, StoreError } from "../../src/store/index.ts";
import { HAVE_REDIS_SERVER, type OwnServer, startRedisServer } from "../helpers/servers.ts";

/**
 * The store is keyv: a Keyv instance over the official adapter of STORE_URL's scheme, whose data
 * keyv's own tooling reads; a failed read is an error, never "not found"; and an expired entry a
 * read meets is left for the sweeper rather than deleted by keyv (a claim may have taken it).
 */

const REQUIRE = process.env.ONAIR_REQUIRE_SERVICES === "1";
const cipher = createCipher(randomBytes(32));
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
});

function adapterOf(store: Store): OnAirKeyvAdapter {
  return store.keyv.store as OnAirKeyvAdapter;
}

async function sqliteStore(): Promise<{ store: Store; path: string }> {
  const dir = mkdtempSync(join(tmpdir(), "onair-keyv-"));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, "onair.sqlite");
  const store = await openStore(`sqlite://${path}`, { cipher, sweepIntervalMs: 0 });
  cleanups.push(() => store.close());
  return { store, path };
}

describe("the store on keyv", () => {
  it("is a Keyv over @keyv/sqlite, whose own Keyv reads what the store wrote", async () => {
    const { store, path } = await sqliteStore();
    expect(store.keyv).toBeInstanceOf(Keyv);
    expect(adapterOf(store).backend.adapter).toBeInstanceOf(KeyvSqlite);
    await store.users.put("T1", "U1", { email: "a@example.com", userId: 7, enterpriseId: 1 });
    await store.set("plain:one", { n: 1 }, 60_000);

    // An operator's keyv, nothing of ours: the official adapter on the same file.
    const tool = new Keyv({
      store: new KeyvSqlite({ uri: `sqlite://${path}` }),
      useKeyPrefix: false,
    });
    tool.namespace = undefined;
    expect(await tool.get("user:T1:U1")).toEqual({
      email: "a@example.com",
      userId: 7,
      enterpriseId: 1,
    });
    expect(await tool.get("plain:one")).toEqual({ n: 1 });
    await tool.disconnect();
  });

  it("leaves an expired entry for the sweeper when a read meets it", async () => {
    const { store } = await sqliteStore();
    await store.set("claim:x", true, 30);
    await new Promise((r) => setTimeout(r, 60));
    expect(await store.get("claim:x")).toBeUndefined();
    // Still there, expired: keyv did not delete it behind a claim that might have taken it.
    const raw = await adapterOf(store).backend.get("claim:x");
    expect(raw).toContain('"expires"');
    expect(await store.claimOnce("claim:x", 60_000)).toBe(true);
    expect(await store.sweepExpired()).toBe(0);
  });

  it("builds Postgres on @keyv/postgres", async () => {
    const url = process.env.TEST_POSTGRES_URL;
    if (!url) {
      expect(REQUIRE).toBe(false);
      return;
    }
    const store = await openStore(url, { cipher, namespace: `k${Date.now()}`, sweepIntervalMs: 0 });
    cleanups.push(() => store.close());
    expect(adapterOf(store).backend.adapter).toBeInstanceOf(KeyvPostgres);
    await store.set("a", 1);
    expect(await store.get("a")).toBe(1);
    await store.deletePrefix("");
  });

  it("reads a Postgres store kept in the search_path's schema, not the adapter's default public", async () => {
    const url = process.env.TEST_POSTGRES_URL;
    if (!url) {
      expect(REQUIRE).toBe(false);
      return;
    }
    const schema = `keyv_sp_${Date.now()}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    cleanups.push(async () => {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    });
    // As an earlier version left it: the table where the search_path put it.
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.query(`CREATE TABLE ${schema}.keyv(key VARCHAR(255) PRIMARY KEY, value TEXT)`);
    await admin.query(
      `INSERT INTO ${schema}.keyv(key, value) VALUES('old:one', '{"value":{"kept":true}}')`,
    );
    const u = new URL(url);
    u.searchParams.set("options", `-c search_path=${schema}`);
    const store = await openStore(u.toString(), { cipher, sweepIntervalMs: 0 });
    cleanups.push(() => store.close());
    expect(await store.get("old:one")).toEqual({ kept: true });
    expect(await store.keys("old:")).toEqual(["old:one"]);
  });
});

describe.skipIf(!HAVE_REDIS_SERVER && !REQUIRE)("a Redis store on keyv", () => {
  it("is built on @keyv/redis, and a read while Redis is down fails instead of finding nothing", async () => {
    const server: OwnServer = await startRedisServer();
    cleanups.push(() => server.stop());
    const store = await openStore(server.url, { cipher, sweepIntervalMs: 0 });
    cleanups.push(() => store.close());
    expect(adapterOf(store).backend.adapter).toBeInstanceOf(KeyvRedis);
    await store.set("k", "v");
    expect(await store.get("k")).toBe("v");
    await server.stop();
    const err = await store.get("k").then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StoreError);
  });
});
