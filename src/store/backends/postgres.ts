import pg from "pg";
import { causeText } from "../errors.ts";
import { postgresLabel } from "./labels.ts";
import { type Backend, type BackendOptions, prefixEnd } from "./types.ts";

/**
 * Postgres over keyv's table layout (`keyv(key VARCHAR(255) PRIMARY KEY, value TEXT)`), on a
 * pool of our own: one per store (two stores on one URI never share it), an `error` listener
 * (an idle connection dropped by the server must not crash the process), and bounds on
 * everything: acquiring or opening a connection, each statement on the server
 * (`statement_timeout`) and each query on the client (`query_timeout`, which also lets go of a
 * connection to a frozen server: pg-pool discards a client whose query failed).
 *
 * Key order is byte order (`COLLATE "C"`) whatever the database's locale, so listings match
 * SQLite and Redis. The primary key's index is in the database's collation and cannot serve a
 * prefix range in another; the index on `key COLLATE "C"` does (EXPLAIN: `Index Scan using
 * keyv_key_c on keyv, Index Cond: (key >= $1 COLLATE "C" AND key < $2 COLLATE "C")`), so a
 * listing reads what it returns, not the table.
 *
 * A group write (see group.ts) is one multi-row upsert over `unnest` of two arrays: one
 * statement, one transaction, all rows or none; its keys are sorted so two instances' groups
 * lock shared rows in the same order and cannot deadlock.
 */

const TABLE = "keyv";
/**
 * Group writes in flight at once, each on its own pooled connection: a durable commit waits for
 * the WAL's flush, and a large record's write takes a while, so one at a time would hold every
 * webhook behind it. The server flushes concurrent commits together.
 */
export const POSTGRES_WRITES_IN_FLIGHT = 4;
const INDEX = `${TABLE}_key_c`;

/** Concurrent `CREATE … IF NOT EXISTS` from parallel starts can still collide on the catalog. */
const RACE_CODES = new Set(["23505", "42P07"]);

/** The range a prefix covers, in byte order; the `keyv_key_c` index serves it. */
const PREFIX_RANGE = `key COLLATE "C" >= $1 AND key COLLATE "C" < $2`;

/** The listing statement ($1 prefix, $2 its end, $3 limit or null); tests EXPLAIN it. */
export function postgresScanSql(reverse: boolean): string {
  const dir = reverse ? "DESC" : "ASC";
  return `SELECT key, value FROM ${TABLE} WHERE ${PREFIX_RANGE} ORDER BY key COLLATE "C" ${dir} LIMIT $3`;
}

/** The schema, on a connection of its own: no statement bound (an index on a big table takes time). */
async function migrate(url: string, connectTimeoutMs: number): Promise<void> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: connectTimeoutMs,
  });
  client.on("error", () => {});
  await client.connect();
  try {
    for (const ddl of [
      `CREATE TABLE IF NOT EXISTS ${TABLE}(key VARCHAR(255) PRIMARY KEY, value TEXT)`,
      `CREATE INDEX IF NOT EXISTS ${INDEX} ON ${TABLE} (key COLLATE "C")`,
    ]) {
      try {
        await client.query(ddl);
      } catch (err) {
        if (!RACE_CODES.has((err as { code?: string }).code ?? "")) throw err;
      }
    }
  } finally {
    await client.end().catch(() => {});
  }
}

export async function openPostgres(url: string, opts: BackendOptions): Promise<Backend> {
  await migrate(url, opts.connectTimeoutMs);
  const label = postgresLabel(url);
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    // Waiting for a free connection, or opening one, counts against the operation's bound.
    connectionTimeoutMillis: opts.opTimeoutMs,
    idleTimeoutMillis: 30_000,
    // The server gives up on a statement at the bound (locks released, a clean error); the
    // client a little later, for a server that cannot even do that (frozen, unreachable).
    statement_timeout: opts.opTimeoutMs,
    query_timeout: opts.opTimeoutMs + 500,
    keepAlive: true,
  });
  pool.on("error", (err) => {
    // An idle client lost its connection; the pool replaces it on the next query.
    opts.logger?.warn({ store: label, reason: causeText(err) }, "postgres store connection lost");
  });
  const q = async <R extends pg.QueryResultRow>(name: string, text: string, values: unknown[]) =>
    // Named: each pooled connection parses the statement once.
    pool.query<R>({ name, text, values });
  const range = PREFIX_RANGE;
  /** A bulk statement (many rows): its own transaction with the bulk bound instead. */
  const bulk = async (name: string, text: string, values: unknown[]) => {
    const client = await pool.connect();
    let failed: unknown;
    try {
      await client.query("BEGIN");
      await client.query(`SET LOCAL statement_timeout = ${Math.floor(opts.bulkTimeoutMs)}`);
      const r = await client.query({
        name,
        text,
        values,
        query_timeout: opts.bulkTimeoutMs + 500,
      } as pg.QueryConfig);
      await client.query("COMMIT");
      return r;
    } catch (err) {
      failed = err;
      await client.query("ROLLBACK").catch(() => {});
      throw err;
    } finally {
      // A client whose statement failed may be stuck mid-protocol: discard it.
      client.release(failed instanceof Error ? failed : undefined);
    }
  };

  return {
    kind: "postgres",
    label,
    maxBatch: 500,
    maxInFlight: POSTGRES_WRITES_IN_FLIGHT,
    async get(key) {
      const r = await q<{ value: string }>(
        "onair_get",
        `SELECT value FROM ${TABLE} WHERE key = $1`,
        [key],
      );
      return r.rows[0]?.value;
    },
    async write(entries) {
      const sorted = entries.length > 1 ? [...entries].sort(byKey) : entries;
      await q(
        "onair_put",
        `INSERT INTO ${TABLE}(key, value) SELECT * FROM unnest($1::varchar[], $2::text[]) ON CONFLICT(key) DO UPDATE SET value = excluded.value`,
        [sorted.map((e) => e.key), sorted.map((e) => e.raw)],
      );
    },
    async delete(key) {
      const r = await q("onair_del", `DELETE FROM ${TABLE} WHERE key = $1`, [key]);
      return (r.rowCount ?? 0) > 0;
    },
    async scan(prefix, o) {
      const r = await q<{ key: string; value: string }>(
        o.reverse ? "onair_scan_desc" : "onair_scan_asc",
        postgresScanSql(o.reverse),
        [prefix, prefixEnd(prefix), o.limit ?? null],
      );
      return r.rows.map((row) => [row.key, row.value] as [string, string]);
    },
    async deleteKeys(keys) {
      if (keys.length === 0) return 0;
      const r = await q("onair_del_many", `DELETE FROM ${TABLE} WHERE key = ANY($1)`, [keys]);
      return r.rowCount ?? 0;
    },
    async deletePrefix(prefix) {
      const r = await bulk("onair_del_range", `DELETE FROM ${TABLE} WHERE ${range}`, [
        prefix,
        prefixEnd(prefix),
      ]);
      return r.rowCount ?? 0;
    },
    async claim(key, raw, _ttl, now) {
      // One statement: a concurrent claimer either inserts or meets the row locked by the
      // winner and re-checks the WHERE against the committed value.
      const r = await q(
        "onair_claim",
        `INSERT INTO ${TABLE}(key, value) VALUES($1, $2) ON CONFLICT(key) DO UPDATE SET value = excluded.value WHERE (${TABLE}.value::json->>'expires')::bigint < $3 RETURNING key`,
        [key, raw, now],
      );
      return r.rowCount === 1;
    },
    async replace(key, expected, raw) {
      const r = await q(
        "onair_replace",
        `UPDATE ${TABLE} SET value = $1 WHERE key = $2 AND value = $3 RETURNING key`,
        [raw, key, expected],
      );
      return r.rowCount === 1;
    },
    async sweep(prefix, now) {
      const r = await bulk(
        "onair_sweep",
        `DELETE FROM ${TABLE} WHERE ${range} AND value LIKE '%"expires":%' AND (value::json->>'expires')::bigint < $3`,
        [prefix, prefixEnd(prefix), now],
      );
      return r.rowCount ?? 0;
    },
    async ping() {
      await pool.query("SELECT 1");
    },
    async close() {
      await pool.end();
    },
  };
}

function byKey(a: { key: string }, b: { key: string }): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}
