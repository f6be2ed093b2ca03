import KeyvPostgres from "@keyv/postgres";
import pg from "pg";
import { causeText } from "../errors.ts";
import { postgresLabel } from "./labels.ts";
import { afterIn, type Backend, type BackendOptions, prefixEnd } from "./types.ts";

/**
 * Postgres on the official keyv adapter `@keyv/postgres`: its table
 * (`keyv(key VARCHAR(255) PRIMARY KEY, value TEXT)`, created by the adapter), its `get`, and its
 * query function, which runs on a connection pool. The adapter keeps that pool in a module-level
 * variable shared by every adapter of one URI (closing one store would end the others' pool,
 * and a second URI silently replaces the first), with no `error` listener (an idle connection
 * dropped by the server would crash the process) and no bounds. So the adapter is given the
 * pool through the one method it asks it from (`connect`, overridden below): one pool per store,
 * with an `error` listener and bounds on everything: acquiring or opening a connection, each
 * statement on the server (`statement_timeout`) and each query on the client (`query_timeout`,
 * which also lets go of a connection to a frozen server: pg-pool discards a client whose query
 * failed). What the adapter does not offer runs on that same pool, never on a second one:
 *
 * - Listings: the adapter's iterator pages with `LIKE`, in the database's collation. Key order
 *   here is byte order (`COLLATE "C"`) whatever the database's locale, so listings match SQLite
 *   and Redis. The primary key's index is in the database's collation and cannot serve a prefix
 *   range in another; the index on `key COLLATE "C"` (created at open) does (EXPLAIN: `Index
 *   Scan using keyv_key_c on keyv, Index Cond: (key >= $1 COLLATE "C" AND key < $2 COLLATE
 *   "C")`), so a listing reads what it returns, not the table.
 * - Grouped writes: the adapter's `setMany` is one `unnest` upsert, in the order given; here a
 *   group is one multi-row upsert (see upsertSql) with the keys sorted, so two instances' groups
 *   lock shared rows in the same order and cannot deadlock. Several groups are in flight at once
 *   (POSTGRES_WRITES_IN_FLIGHT).
 * - Claims and compare-and-set (leases): one conditional statement each.
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

/**
 * The range a prefix covers, in byte order; the primary key serves it where the key is in byte
 * order (a new table), the `keyv_key_c` index where it is not.
 */
const PREFIX_RANGE = `key COLLATE "C" >= $1 AND key COLLATE "C" < $2`;

/**
 * The listing statement ($1 prefix or the key to list after, $2 the prefix's end, $3 limit or
 * null); tests EXPLAIN it.
 */
export function postgresScanSql(reverse: boolean, after = false): string {
  const dir = reverse ? "DESC" : "ASC";
  const range = after ? `key COLLATE "C" > $1 AND key COLLATE "C" < $2` : PREFIX_RANGE;
  return `SELECT key, value FROM ${TABLE} WHERE ${range} ORDER BY key COLLATE "C" ${dir} LIMIT $3`;
}

/** How long creating the prefix index may take (a big table's first upgrade). */
const SCHEMA_TIMEOUT_MS = 10 * 60_000;

/**
 * The table and, where it needs one, the prefix index, each in a transaction of its own on one
 * of the pool's connections, without the statement bound.
 *
 * A new table is the adapter's (`key VARCHAR(255) PRIMARY KEY, value TEXT`, the layout keyv's
 * tools read) with one difference: its key is in byte order (`COLLATE "C"`), so the primary key's
 * own index serves prefix ranges, and every write and delete maintains one index, not two. A
 * table made by an earlier version (or by the adapter, or by an earlier version still running in
 * a scale-out) keeps the database's collation: it gets the `keyv_key_c` index as before.
 */
async function migrate(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  let failed: unknown;
  const ddl = async (text: string) => {
    try {
      await client.query("BEGIN");
      await client.query("SET LOCAL statement_timeout = 0");
      await client.query({ text, query_timeout: SCHEMA_TIMEOUT_MS } as pg.QueryConfig);
      await client.query("COMMIT");
    } catch (err) {
      await client.query("ROLLBACK").catch(() => {});
      if (!RACE_CODES.has((err as { code?: string }).code ?? "")) throw err;
    }
  };
  try {
    await ddl(
      `CREATE TABLE IF NOT EXISTS ${TABLE}(key VARCHAR(255) COLLATE "C" PRIMARY KEY, value TEXT)`,
    );
    if (!(await keyInByteOrder(client))) {
      await ddl(`CREATE INDEX IF NOT EXISTS ${INDEX} ON ${TABLE} (key COLLATE "C")`);
    }
  } catch (err) {
    failed = err;
    throw err;
  } finally {
    client.release(failed instanceof Error ? failed : undefined);
  }
}

/** Whether the table's key column is in byte order ("C"), so that its primary key serves ranges. */
async function keyInByteOrder(client: pg.ClientBase | pg.Pool): Promise<boolean> {
  const r = await client.query<{ collation: string }>(
    `SELECT c.collname AS collation FROM pg_attribute a JOIN pg_collation c ON c.oid = a.attcollation WHERE a.attrelid = to_regclass('${TABLE}') AND a.attname = 'key'`,
  );
  return r.rows[0]?.collation === "C";
}

/**
 * The schema holding the `keyv` table the store's statements name unqualified (found through
 * the connection's search_path, as every earlier version created and used it). The adapter
 * names `{schema}.keyv` and defaults to `public`: on a database whose search_path puts another
 * schema first, it would read (and create) another, empty table, and every record would seem
 * gone after the upgrade.
 */
async function tableSchema(pool: pg.Pool): Promise<string> {
  const r = await pool.query<{ schema: string }>(
    `SELECT n.nspname AS schema FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass('${TABLE}')`,
  );
  const name = r.rows[0]?.schema;
  if (name === undefined) throw new Error(`the ${TABLE} table is not on the search_path`);
  // The adapter puts the name into its SQL as it is.
  return /^[a-z_][a-z0-9_]*$/.test(name) ? name : `"${name.replaceAll('"', '""')}"`;
}

/** The official adapter, on the pool it is handed instead of its module-level one. */
class PooledKeyvPostgres extends KeyvPostgres {
  override async connect() {
    const pool = (this.opts as { onairPool: pg.Pool }).onairPool;
    return async (sql: string, values?: unknown) =>
      (await pool.query(sql, values as unknown[])).rows;
  }
  override async disconnect() {
    await (this.opts as { onairPool: pg.Pool }).onairPool.end();
  }
}

export async function openPostgres(url: string, opts: BackendOptions): Promise<Backend> {
  const label = postgresLabel(url);
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    // Waiting for a free connection, or opening one, counts against the operation's bound (the
    // first one against the connect bound).
    connectionTimeoutMillis: opts.connectTimeoutMs,
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
  let schema: string;
  try {
    await migrate(pool);
    schema = await tableSchema(pool);
  } catch (err) {
    await pool.end().catch(() => {});
    throw err;
  }
  const adapter = new PooledKeyvPostgres({
    uri: url,
    table: TABLE,
    schema,
    onairPool: pool,
  } as never);
  // Its own `CREATE TABLE IF NOT EXISTS` (a no-op now) reports failure as an event, which would
  // throw with no listener.
  adapter.on("error", () => {});
  pool.options.connectionTimeoutMillis = opts.opTimeoutMs;
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
    adapter,
    async get(key) {
      const v = (await adapter.get(key)) as string | undefined;
      return v ?? undefined;
    },
    async write(entries) {
      // In key order, so that two groups in flight lock shared keys in one order (no deadlock).
      const sorted = entries.length > 1 ? [...entries].sort(byKey) : entries;
      const values: string[] = [];
      for (const e of sorted) values.push(e.key, e.raw);
      await q(`onair_put_${sorted.length}`, upsertSql(sorted.length), values);
    },
    async delete(key) {
      const r = await q("onair_del", `DELETE FROM ${TABLE} WHERE key = $1`, [key]);
      return (r.rowCount ?? 0) > 0;
    },
    async scan(prefix, o) {
      const after = afterIn(prefix, o);
      const r = await q<{ key: string; value: string }>(
        after !== undefined ? "onair_scan_after" : o.reverse ? "onair_scan_desc" : "onair_scan_asc",
        postgresScanSql(o.reverse, after !== undefined),
        [after ?? prefix, prefixEnd(prefix), o.limit ?? null],
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
      await adapter.disconnect();
    },
  };
}

/**
 * The group write of `rows` rows: one multi-row upsert, each key and value a text parameter of
 * its own. (An earlier form passed two arrays to `unnest`: one statement for every size, but the
 * driver escapes every value into an array literal first, which on the webhook path cost more
 * than everything else the route allocates, ~5 KB a message.) Built once per size, and named
 * per size: each pooled connection parses a size once.
 */
const upserts: string[] = [];
function upsertSql(rows: number): string {
  let sql = upserts[rows];
  if (sql === undefined) {
    const tuples = Array.from({ length: rows }, (_, i) => `($${2 * i + 1},$${2 * i + 2})`);
    sql = `INSERT INTO ${TABLE}(key, value) VALUES ${tuples.join(",")} ON CONFLICT(key) DO UPDATE SET value = excluded.value`;
    upserts[rows] = sql;
  }
  return sql;
}

function byKey(a: { key: string }, b: { key: string }): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}
