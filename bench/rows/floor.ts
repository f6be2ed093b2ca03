import { createServer } from "node:http";
import { createClient } from "@redis/client";
import pg from "pg";
import sqlite3 from "sqlite3";
import { listen, load, mainThreadCpuMicros } from "../harness/measure.ts";

/**
 * The floor under the ingest bars (README: Benchmarks), written apart from the project: bare
 * node:http, the same JSON.parse, and a grouped durable write made straight with the store's
 * driver, answering 204 once the group holding the message has committed. Not `src/store`: no
 * keyv, no encryption, no schema, no subscription or secret, no engine, no bounds.
 *
 * - SQLite (node-sqlite3, the driver @keyv/sqlite brings): its own connection to the same file,
 *   WAL with synchronous=NORMAL, one multi-row INSERT per group, one group at a time (SQLite has
 *   one writer);
 * - Redis (@redis/client): one pipelined batch of SETs per group;
 * - Postgres (pg): one multi-row INSERT per group, a few groups in flight on a pool.
 *
 * A group is every message parsed while the previous group was being written (or, with room,
 * in the same turn of the event loop). The floor's rows sit in a table or key prefix of their
 * own, removed afterwards, so the app beside it never reads them.
 */
export interface FloorResult {
  perSec: number;
  p50: number;
  p99: number;
  sent: number;
  failed: number;
  /** Process CPU µs per message (every thread: libuv's pool too). */
  cpu: number;
  /** The serving thread's own CPU µs per message. */
  thread: number;
  /** The serving thread's event-loop busy µs per message (as the route's busy row). */
  busy: number;
}

interface FloorDriver {
  /** Commits every row in one durable step. */
  write(rows: Array<[key: string, value: string]>): Promise<void>;
  /** Groups in flight at once. */
  inFlight: number;
  close(): Promise<void>;
}

const TABLE = "bench_floor";
const MAX_GROUP = 500;

async function sqliteFloor(path: string): Promise<FloorDriver> {
  const db = await new Promise<sqlite3.Database>((resolve, reject) => {
    const d = new sqlite3.Database(path, (err) => (err ? reject(err) : resolve(d)));
  });
  // The app's connections share the file (its engine commits beside the floor's run).
  db.configure("busyTimeout", 5_000);
  const exec = (sql: string, params: unknown[] = []) =>
    new Promise<void>((resolve, reject) =>
      db.run(sql, params, (err) => (err ? reject(err) : resolve())),
    );
  await exec("PRAGMA journal_mode = WAL");
  await exec("PRAGMA synchronous = NORMAL");
  await exec(`CREATE TABLE IF NOT EXISTS ${TABLE}(key TEXT PRIMARY KEY, value TEXT)`);
  return {
    inFlight: 1,
    write(rows) {
      const values = rows.map(() => "(?,?)").join(",");
      return exec(`INSERT INTO ${TABLE}(key, value) VALUES ${values}`, rows.flat());
    },
    async close() {
      await exec(`DROP TABLE ${TABLE}`);
      await new Promise<void>((r) => db.close(() => r()));
    },
  };
}

async function redisFloor(url: string): Promise<FloorDriver> {
  const client = createClient({ url });
  client.on("error", () => {});
  await client.connect();
  const keys: string[] = [];
  return {
    inFlight: 4,
    async write(rows) {
      const batch = client.multi();
      for (const [k, v] of rows) {
        batch.set(`${TABLE}:${k}`, v);
        keys.push(`${TABLE}:${k}`);
      }
      await batch.execAsPipeline();
    },
    async close() {
      for (let i = 0; i < keys.length; i += 1_000) await client.unlink(keys.slice(i, i + 1_000));
      await client.close();
    },
  };
}

async function postgresFloor(url: string): Promise<FloorDriver> {
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  pool.on("error", () => {});
  await pool.query(`CREATE TABLE IF NOT EXISTS ${TABLE}(key TEXT PRIMARY KEY, value TEXT)`);
  return {
    inFlight: 4,
    async write(rows) {
      const values = rows.map((_, i) => `($${2 * i + 1},$${2 * i + 2})`).join(",");
      await pool.query(`INSERT INTO ${TABLE}(key, value) VALUES ${values}`, rows.flat());
    },
    async close() {
      await pool.query(`DROP TABLE ${TABLE}`);
      await pool.end();
    },
  };
}

function openFloor(storeUrl: string): Promise<FloorDriver> {
  const scheme = storeUrl.split(":", 1)[0];
  if (scheme === "sqlite") return sqliteFloor(storeUrl.slice("sqlite://".length));
  if (scheme === "redis" || scheme === "rediss") return redisFloor(storeUrl);
  if (scheme === "postgres" || scheme === "postgresql") return postgresFloor(storeUrl);
  throw new Error(`no floor for ${scheme}`);
}

/** Group commit: what arrives while a group is written goes out as the next group. */
function grouped(driver: FloorDriver): (key: string, value: string) => Promise<void> {
  let queue: Array<{ row: [string, string]; done: (err?: unknown) => void }> = [];
  let writing = 0;
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    while (queue.length > 0 && writing < driver.inFlight) {
      const group = queue.slice(0, MAX_GROUP);
      queue = queue.slice(group.length);
      writing++;
      driver
        .write(group.map((g) => g.row))
        .then(
          () => {
            for (const g of group) g.done();
          },
          (err: unknown) => {
            for (const g of group) g.done(err);
          },
        )
        .finally(() => {
          writing--;
          if (queue.length > 0 && !scheduled) {
            scheduled = true;
            setImmediate(flush);
          }
        });
    }
  };
  return (key, value) =>
    new Promise<void>((resolve, reject) => {
      queue.push({ row: [key, value], done: (err) => (err ? reject(err) : resolve()) });
      if (!scheduled && writing < driver.inFlight) {
        scheduled = true;
        setImmediate(flush);
      }
    });
}

/** Messages each floor run sends first, unmeasured (its own warm-up). */
export const FLOOR_WARMUP = 2_000;

export async function floorIngest(
  storeUrl: string,
  count: number,
  concurrency: number,
  extra: Record<string, unknown> = {},
): Promise<FloorResult> {
  const driver = await openFloor(storeUrl);
  const store = grouped(driver);
  let seq = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const message = JSON.parse(Buffer.concat(chunks).toString());
      const key = `${Date.now().toString(36)}-${(seq++).toString(36)}`;
      store(key, JSON.stringify({ receivedAt: Date.now(), message })).then(
        () => res.writeHead(204).end(),
        () => res.writeHead(503).end(),
      );
    });
  });
  const url = await listen(server);
  try {
    const plan = { kind: "webhook", url: `${url}/webhooks/events/x`, concurrency };
    // Warm the driver and both sides' code outside the measured run.
    await load({ ...plan, count: FLOOR_WARMUP, offset: 3_000_000 });
    const cpu0 = process.cpuUsage();
    const thread0 = mainThreadCpuMicros() ?? Number.NaN;
    const elu = performance.eventLoopUtilization();
    const r = await load({ ...plan, count, ...extra, offset: 4_000_000 });
    const cpu = process.cpuUsage(cpu0);
    const busy = performance.eventLoopUtilization(elu).active * 1000;
    const thread = (mainThreadCpuMicros() ?? Number.NaN) - thread0;
    return {
      perSec: r.perSec,
      p50: r.p50,
      p99: r.p99,
      sent: r.sent,
      failed: r.failed,
      cpu: (cpu.user + cpu.system) / r.sent,
      thread: thread / r.sent,
      busy: busy / r.sent,
    };
  } finally {
    server.close();
    await driver.close().catch(() => undefined);
  }
}
