import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSlackEmulator } from "@onair/slack-emulator";
import { createClient } from "@redis/client";
import pg from "pg";
import { request } from "undici";
import { afterAll, describe, expect, it } from "vitest";
import { activeRepo, liveRepo, loadEventLive, sessionsRepo } from "../../src/live/live-record.ts";
import { startSandboxServer } from "../../src/sandbox/index.ts";
import { botScopes } from "../../src/slack/scopes.ts";
import {
  CORE_REPOSITORIES,
  checkEncryptionKey,
  createCipher,
  openStore,
  outboxBatchRepo,
  outboxWorkRepo,
  type RepositoryDefinition,
} from "../../src/store/index.ts";
import { childAppEnv, eventually, freePort, spawnApp } from "../helpers/live-fixtures.ts";
import {
  HAVE_POSTGRES_CLUSTER,
  HAVE_REDIS_SERVER,
  type OwnServer,
  startPostgresCluster,
  startRedisServer,
} from "../helpers/servers.ts";

/**
 * A store written by the code before the store moved onto keyv (test/fixtures/store-upgrade,
 * made once by make.ts there at commit bf0e547), on each of SQLite, Redis and Postgres, opened by
 * today's code: every record of every repository reads back as the old code read it (secrets
 * decrypted with the same key), the encryption key's canary is current, and the app started on
 * it accepts the subscription's webhook at its old URL with its old secret (and refuses a wrong
 * one), drains the outbox the old instance left and applies it to the live record it left.
 */

const REQUIRE = process.env.ONAIR_REQUIRE_SERVICES === "1";
const FIXTURES = new URL("../fixtures/store-upgrade/", import.meta.url).pathname;
const KEY = Buffer.from(readFileSync(join(FIXTURES, "key.txt"), "utf8").trim(), "base64");
/** The old code's repositories (outbox-work and outbox-batch came after it: its store holds none). */
const REPOS: readonly RepositoryDefinition[] = [
  ...CORE_REPOSITORIES.filter((d) => d !== outboxWorkRepo && d !== outboxBatchRepo),
  liveRepo,
  activeRepo,
  sessionsRepo,
];

interface Expected {
  team: string;
  eventId: string;
  instanceId: string;
  subscriptionId: string;
  webhooks: Array<{ type: string; path: string; headers: Record<string, string> }>;
  attendees: { joined: number; left: number; outbox: number };
  records: Record<string, Array<{ id: string; value: unknown }>>;
}

function expected(backend: string): Expected {
  return JSON.parse(readFileSync(join(FIXTURES, `${backend}-expected.json`), "utf8")) as Expected;
}

interface Loaded {
  url: string;
  close(): Promise<void>;
}

async function loadSqlite(): Promise<Loaded> {
  const dir = mkdtempSync(join(tmpdir(), "onair-upgrade-sqlite-"));
  copyFileSync(join(FIXTURES, "sqlite", "onair.sqlite"), join(dir, "onair.sqlite"));
  return {
    url: `sqlite://${join(dir, "onair.sqlite")}`,
    close: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

async function loadRedis(): Promise<Loaded> {
  const server: OwnServer = await startRedisServer();
  const dump = JSON.parse(readFileSync(join(FIXTURES, "redis.json"), "utf8")) as Array<{
    key: string;
    type: "string" | "zset";
    value: string | Array<[string, number]>;
    expiresAt: number | null;
  }>;
  const redis = createClient({ url: server.url });
  await redis.connect();
  for (const e of dump) {
    if (e.type === "string") {
      const left = e.expiresAt === null ? undefined : e.expiresAt - Date.now();
      if (left !== undefined && left <= 0) continue;
      await redis.set(e.key, e.value as string, left === undefined ? {} : { PX: left });
    } else {
      const members = e.value as Array<[string, number]>;
      await redis.zAdd(
        e.key,
        members.map(([value, score]) => ({ value, score })),
      );
    }
  }
  await redis.close();
  return { url: server.url, close: () => server.stop() };
}

async function loadPostgres(): Promise<Loaded> {
  const server: OwnServer = await startPostgresCluster();
  const dump = JSON.parse(readFileSync(join(FIXTURES, "postgres.json"), "utf8")) as {
    table: string;
    indexes: string[];
    rows: Array<{ key: string; value: string }>;
  };
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  await client.query(dump.table);
  for (const ddl of dump.indexes) {
    // The primary key's index came with the table.
    if (!ddl.includes("keyv_pkey")) await client.query(ddl);
  }
  for (const r of dump.rows) {
    await client.query("INSERT INTO keyv(key, value) VALUES($1, $2)", [r.key, r.value]);
  }
  await client.end();
  return { url: server.url, close: () => server.stop() };
}

const backends = [
  { name: "sqlite", available: true, load: loadSqlite },
  { name: "redis", available: HAVE_REDIS_SERVER, load: loadRedis },
  { name: "postgres", available: HAVE_POSTGRES_CLUSTER, load: loadPostgres },
];

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
});

for (const backend of backends) {
  describe.skipIf(!backend.available && !REQUIRE)(`a ${backend.name} store of the old code`, () => {
    it("keeps every record, its webhook and its outbox under today's code", async () => {
      const want = expected(backend.name);
      const loaded = await backend.load();
      cleanups.push(() => loaded.close());
      const cipher = createCipher(KEY);

      const store = await openStore(loaded.url, {
        cipher,
        repositories: [liveRepo, activeRepo, sessionsRepo],
      });
      try {
        expect(await checkEncryptionKey(store, cipher)).toBe("current");
        for (const def of REPOS) {
          const old = want.records[def.prefix] ?? [];
          // Only cached upstream tokens expire (an hour after they were fetched); the one the
          // fixture wrote to last until 2099 must be there.
          const alive = old.filter(
            (r) =>
              def.prefix !== "token" || (r.value as { expiresAt: number }).expiresAt > Date.now(),
          );
          expect(alive.length, def.prefix).toBeGreaterThan(0);
          expect(await store.repository(def).list(), def.prefix).toEqual(alive);
        }
        expect((await store.outbox.list()).length).toBe(want.attendees.outbox);
        // Its outbox items are keyed by sequence alone, with no marker: the legacy read drains them.
        expect(await store.repository(outboxWorkRepo).list()).toEqual([]);
        expect((await store.outbox.listLegacy()).length).toBe(want.attendees.outbox);
      } finally {
        await store.close();
      }

      const signingSecret = "upgrade-signing-secret-0123456789";
      const emulator = await startSlackEmulator({
        signingSecret,
        seed: { botScopes: botScopes() },
      });
      cleanups.push(() => emulator.close());
      const work = mkdtempSync(join(tmpdir(), "onair-upgrade-sandbox-"));
      cleanups.push(async () => rmSync(work, { recursive: true, force: true }));
      copyFileSync(join(FIXTURES, `${backend.name}-sandbox.json`), join(work, "sandbox.json"));
      const sandbox = await startSandboxServer({ stateFile: join(work, "sandbox.json") });
      cleanups.push(() => sandbox.close());
      const child = await spawnApp(
        childAppEnv({
          port: await freePort(),
          signingSecret,
          emulator,
          sandbox,
          storeUrl: loaded.url,
          key: KEY,
          logLevel: "warn",
        }),
      );
      cleanups.push(() => child.stop());

      const hook = want.webhooks.find((w) => w.type === "ATTENDEE_INFO");
      expect(hook?.path).toBe(`/webhooks/events/${want.subscriptionId}`);
      const post = async (headers: Record<string, string>) => {
        const res = await request(`${child.origin}${hook?.path}`, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body: JSON.stringify({
            eventId: want.eventId,
            instanceId: want.instanceId,
            type: "ATTENDEE_INFO",
            info: {
              endpointGuid: "after-the-upgrade",
              endpointType: "WEB",
              infoType: "JOIN",
              joinTime: Date.now(),
              name: "After The Upgrade",
            },
          }),
        });
        await res.body.dump();
        return res.statusCode;
      };
      expect(await post({ "x-onair-secret": "not-the-secret" })).toBe(401);
      expect(await post(hook?.headers ?? {})).toBe(204);

      // The old instance's 12 sessions, its 3 outbox items, and the one above.
      const sessions = want.attendees.joined + want.attendees.outbox + 1;
      const reader = await openStore(loaded.url, { cipher });
      cleanups.push(() => reader.close());
      await eventually(
        async () => {
          const { live } = await loadEventLive(
            reader.repository(liveRepo),
            reader.repository(sessionsRepo),
            want.team,
            want.eventId,
          );
          const n = live.current()?.sessions.size ?? 0;
          const left = (await reader.outbox.list()).length;
          return n === sessions && left === 0 ? true : undefined;
        },
        `${sessions} sessions applied and the outbox drained`,
        45_000,
      );
      await child.stop();
    }, 120_000);
  });
}
