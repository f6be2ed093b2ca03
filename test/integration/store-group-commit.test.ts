import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import sqlite3 from "sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POSTGRES_WRITES_IN_FLIGHT } from "../../src/store/backends/postgres.ts";
import { CHANNELS, type Harness, startHarness, TEAM } from "../helpers/app-harness.ts";
import { eventually } from "../helpers/live-fixtures.ts";
import { HAVE_POSTGRES_CLUSTER, type OwnServer, startPostgresCluster } from "../helpers/servers.ts";
import {
  guidOf,
  postJoin,
  seedWebhookTarget,
  storedGuids,
  type WebhookTarget,
} from "../helpers/webhook-target.ts";

/**
 * Group commit through the real webhook route, on a real store made to refuse one group: a
 * trigger rejects any row holding the word "poison-pill", which aborts the whole statement the
 * row is in (one multi-row upsert on SQLite and on Postgres). While the test holds
 * the table's write lock, single messages fill the store's group slots (one on SQLite, a few on
 * Postgres), each waiting on the server, and the next messages gather behind them into one
 * group, which holds the poisoned one: exactly those are answered 503 and none of them is
 * stored; the messages before them and every message after are answered 204 and stored.
 */

const REQUIRE = process.env.ONAIR_REQUIRE_SERVICES === "1";
const GROUP = 12;
const POISONED = 5;

/** A write lock on the store's table held by the test, and the trigger. */
interface Refusals {
  /** Installs the trigger that refuses poisoned rows. */
  install(): Promise<void>;
  /** Takes the write lock: the app's next write waits on it. */
  lock(): Promise<void>;
  unlock(): Promise<void>;
  close(): Promise<void>;
}

function sqliteRefusals(path: string): Refusals {
  const db = new sqlite3.Database(path);
  const exec = (sql: string) =>
    new Promise<void>((resolve, reject) => db.exec(sql, (err) => (err ? reject(err) : resolve())));
  return {
    install: () =>
      exec(
        "CREATE TRIGGER refuse_poison BEFORE INSERT ON keyv WHEN NEW.value LIKE '%poison-pill%' BEGIN SELECT RAISE(ABORT, 'refused by the test trigger'); END",
      ),
    lock: () => exec("BEGIN IMMEDIATE"),
    unlock: () => exec("COMMIT"),
    close: () => new Promise<void>((r) => db.close(() => r())),
  };
}

async function postgresRefusals(url: string): Promise<Refusals> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  return {
    async install() {
      await c.query(`CREATE FUNCTION refuse_poison() RETURNS trigger AS $$
        BEGIN
          IF NEW.value LIKE '%poison-pill%' THEN RAISE EXCEPTION 'refused by the test trigger'; END IF;
          RETURN NEW;
        END $$ LANGUAGE plpgsql`);
      await c.query(
        "CREATE TRIGGER refuse_poison BEFORE INSERT ON keyv FOR EACH ROW EXECUTE FUNCTION refuse_poison()",
      );
    },
    async lock() {
      await c.query("BEGIN");
      await c.query("LOCK TABLE keyv IN SHARE ROW EXCLUSIVE MODE");
    },
    async unlock() {
      await c.query("COMMIT");
    },
    close: () => c.end(),
  };
}

const cases: Array<{
  name: string;
  available: boolean;
  /** Groups the backend has in flight at once. */
  slots: number;
  start(): Promise<{ storeUrl: string; refusals: () => Promise<Refusals>; stop(): Promise<void> }>;
}> = [
  {
    name: "SQLite",
    available: true,
    slots: 1,
    async start() {
      const dir = mkdtempSync(join(tmpdir(), "onair-group-"));
      const path = join(dir, "store.sqlite");
      return {
        storeUrl: `sqlite://${path}`,
        refusals: async () => sqliteRefusals(path),
        stop: async () => rmSync(dir, { recursive: true, force: true }),
      };
    },
  },
  {
    name: "PostgreSQL",
    available: HAVE_POSTGRES_CLUSTER,
    slots: POSTGRES_WRITES_IN_FLIGHT,
    async start() {
      const server: OwnServer = await startPostgresCluster();
      return {
        storeUrl: server.url,
        refusals: () => postgresRefusals(server.url),
        stop: () => server.stop(),
      };
    },
  },
];

const nextTurn = () => new Promise<void>((r) => setImmediate(r));

for (const c of cases) {
  describe.skipIf(!c.available && !REQUIRE)(`group commit on ${c.name}`, () => {
    let env: Awaited<ReturnType<(typeof c)["start"]>>;
    let h: Harness;
    let target: WebhookTarget;
    let refusals: Refusals;

    beforeAll(async () => {
      env = await c.start();
      h = await startHarness({ storeUrl: env.storeUrl, env: { LOG_LEVEL: "warn" } });
      // The outbox keeps what was stored; and no write of the worker's joins a group here.
      await h.app.live.stop();
      target = await seedWebhookTarget(h.app.store, {
        team: TEAM,
        eventId: "evt-group-1",
        channel: CHANNELS.events,
      });
      refusals = await env.refusals();
      await refusals.install();
    }, 60_000);
    afterAll(async () => {
      await refusals?.close();
      await h?.close();
      await env?.stop();
    });

    it("answers 503 to exactly the messages of a failed group and 204 to the others", async () => {
      const origin = h.app.origin;
      const store = h.app.store;
      await refusals.lock();
      let locked = true;
      try {
        // Single messages, each its own group, fill the slots and wait on the lock.
        const firsts: Array<Promise<number>> = [];
        // Each message writes its item and its event's marker (outbox-work): the first group
        // holds both; a later first goes alone, its marker waiting while the key is in flight.
        const marker = (i: number) => 1 + (i >= 1 ? 1 : 0);
        for (let i = 0; i < c.slots; i++) {
          firsts.push(postJoin(origin, target, i));
          await eventually(
            () => (store.pendingWrites() === i + 1 + marker(i) ? true : undefined),
            `${i}`,
          );
          // Its group left on the turn it was queued: this turn comes after that one.
          await nextTurn();
        }
        // These gather behind them, the poisoned one among them.
        const group = Array.from({ length: GROUP }, (_, i) =>
          postJoin(origin, target, c.slots + i, i === POISONED ? { name: "poison-pill" } : {}),
        );
        await eventually(
          // The marker once in flight, once waiting (with the poisoned group).
          () => (store.pendingWrites() === c.slots + GROUP + 2 ? true : undefined),
          "the next messages queued",
        );
        await refusals.unlock();
        locked = false;
        expect(await Promise.all(firsts)).toEqual(Array(c.slots).fill(204));
        expect(await Promise.all(group)).toEqual(Array(GROUP).fill(503));
      } finally {
        if (locked) await refusals.unlock();
      }
      // The store took writes again at once.
      const after = Array.from({ length: 8 }, (_, i) => 100 + i);
      expect(await Promise.all(after.map((n) => postJoin(origin, target, n)))).toEqual(
        Array(after.length).fill(204),
      );
      const stored = await storedGuids(store, target.team, target.eventId);
      const firsts = Array.from({ length: c.slots }, (_, i) => i);
      expect([...stored].sort()).toEqual([...firsts, ...after].map(guidOf).sort());
      expect(store.pendingWrites()).toBe(0);
    }, 60_000);
  });
}
