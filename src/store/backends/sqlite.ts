import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import KeyvSqlite from "@keyv/sqlite";
import { afterIn, type Backend, type BackendOptions, prefixEnd, type WriteEntry } from "./types.ts";

/**
 * SQLite, the embedded default, on the official keyv adapter `@keyv/sqlite`: its connection (one
 * node-sqlite3 database per store), its table (`keyv(key VARCHAR(255) PRIMARY KEY, value TEXT)`),
 * its `get`. What the adapter does not offer is run through the adapter's own `query` on that
 * same connection, never a second one:
 *
 * - Durability and speed: the adapter leaves the journal as SQLite's default (rollback, a full
 *   sync per commit). This store switches the connection to WAL with `synchronous=NORMAL`: a
 *   commit survives a crash or `kill -9` of the process (it is in the WAL before the call
 *   returns); only an OS crash or power cut can lose the last commits, the trade every embedded
 *   store makes for speed. `busy_timeout` (the adapter's `busyTimeout`) makes another process on
 *   the same file wait for the write lock, up to the store's bound, instead of failing at once.
 * - Grouped writes: the adapter has no `setMany` (keyv would then issue one statement per entry,
 *   each its own commit). A group write (see group.ts) is one multi-row upsert here: one
 *   statement, one implicit transaction, all rows or none.
 * - Listings: the adapter's iterator pages with `LIKE … LIMIT … OFFSET`, which reads the whole
 *   table to find a prefix. Listings here are range scans on the primary key (`key >= p AND key <
 *   p‹U+10FFFF›`), which SQLite serves from the key's index (EXPLAIN QUERY PLAN: `SEARCH keyv
 *   USING INDEX sqlite_autoindex_keyv_1 (key>? AND key<?)`).
 * - Claims and compare-and-set (leases): one conditional statement each (`RETURNING` says
 *   whether it took).
 *
 * Checkpoints (copying the log into the database, which syncs both files) run in the commit that
 * finds the log past `checkpointPages`: ~10 ms here, every ~1,600 outbox rows. A store opened
 * with a large bound leaves them to another connection to the same file that commits often (the
 * live engine's, see openStore's `sqliteCheckpoints`), so that the webhook route's commits, which
 * acknowledgements wait on, never carry one.
 */

const TABLE = "keyv";
/** Rows per multi-row upsert. */
const CHUNK = 64;

const RANGE = "key >= ? AND key < ?";

/**
 * The listing statement (prefix or the key to list after, the prefix's end, limit or -1); tests
 * EXPLAIN it.
 */
export function sqliteScanSql(reverse: boolean, after = false): string {
  const range = after ? "key > ? AND key < ?" : RANGE;
  return `SELECT key, value FROM ${TABLE} WHERE ${range} ORDER BY key ${reverse ? "DESC" : "ASC"} LIMIT ?`;
}

/** upserts[n - 1] writes n rows; built once. */
const UPSERTS = Array.from(
  { length: CHUNK },
  (_, i) =>
    `INSERT INTO ${TABLE}(key, value) VALUES ${Array.from({ length: i + 1 }, () => "(?,?)").join(",")} ON CONFLICT(key) DO UPDATE SET value = excluded.value`,
);

const SQL = {
  del: `DELETE FROM ${TABLE} WHERE key = ? RETURNING key`,
  delMany: `DELETE FROM ${TABLE} WHERE key IN (SELECT value FROM json_each(?)) RETURNING key`,
  delRange: `DELETE FROM ${TABLE} WHERE ${RANGE} RETURNING key`,
  scanAsc: sqliteScanSql(false),
  scanDesc: sqliteScanSql(true),
  scanAfter: sqliteScanSql(false, true),
  // The update branch runs only over an expired claim; RETURNING yields a row only when this
  // statement inserted or took over the key.
  claim: `INSERT INTO ${TABLE}(key, value) VALUES(?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value WHERE json_extract(${TABLE}.value, '$.expires') < ?3 RETURNING key`,
  replace: `UPDATE ${TABLE} SET value = ?1 WHERE key = ?2 AND value = ?3 RETURNING key`,
  sweep: `DELETE FROM ${TABLE} WHERE ${RANGE} AND json_extract(value, '$.expires') < ? RETURNING key`,
} as const;

export async function openSqlite(path: string, opts: BackendOptions): Promise<Backend> {
  if (path === "" || path === ":memory:" || path.startsWith("file::memory:")) {
    // An in-memory SQLite would silently lose every install on restart.
    throw new Error("sqlite:// needs a file path; use memory:// for a throwaway store");
  }
  mkdirSync(dirname(path), { recursive: true });
  const adapter = new KeyvSqlite({
    uri: `sqlite://${path}`,
    table: TABLE,
    busyTimeout: Math.max(1, Math.floor(opts.opTimeoutMs)),
  });
  // The adapter is an EventEmitter: an error it emits with no listener would throw.
  adapter.on("error", () => {});
  const query = <R>(sql: string, params: unknown[] = []): Promise<R[]> =>
    adapter.query(sql, params) as Promise<R[]>;
  try {
    const mode = await query<{ journal_mode: string }>("PRAGMA journal_mode = WAL");
    if (mode[0]?.journal_mode !== "wal") {
      throw new Error(`could not switch ${path} to WAL (journal_mode=${mode[0]?.journal_mode})`);
    }
    await query("PRAGMA synchronous = NORMAL");
    if (opts.checkpointPages !== undefined) {
      await query(`PRAGMA wal_autocheckpoint = ${Math.max(0, Math.floor(opts.checkpointPages))}`);
    }
  } catch (err) {
    await adapter.disconnect().catch(() => {});
    throw err;
  }

  let closed = false;
  const count = async (sql: string, params: unknown[]) => (await query(sql, params)).length;
  return {
    kind: "sqlite",
    label: `sqlite ${path}`,
    maxBatch: CHUNK,
    maxInFlight: 1,
    adapter,
    async get(key) {
      const v = await adapter.get<string>(key);
      return v ?? undefined;
    },
    async write(entries: readonly WriteEntry[]) {
      if (closed) throw new Error("database is closed");
      const sql = UPSERTS[entries.length - 1];
      if (!sql) throw new Error(`no upsert for ${entries.length} rows`);
      const params: string[] = [];
      for (const e of entries) params.push(e.key, e.raw);
      await query(sql, params);
    },
    delete: async (key) => (await count(SQL.del, [key])) > 0,
    async scan(prefix, o) {
      const after = afterIn(prefix, o);
      const rows = await query<{ key: string; value: string }>(
        after !== undefined ? SQL.scanAfter : o.reverse ? SQL.scanDesc : SQL.scanAsc,
        [after ?? prefix, prefixEnd(prefix), o.limit ?? -1],
      );
      return rows.map((r) => [r.key, r.value] as [string, string]);
    },
    deleteKeys: async (keys) =>
      keys.length === 0 ? 0 : count(SQL.delMany, [JSON.stringify(keys)]),
    deletePrefix: (prefix) => count(SQL.delRange, [prefix, prefixEnd(prefix)]),
    claim: async (key, raw, _ttl, now) => (await count(SQL.claim, [key, raw, now])) === 1,
    replace: async (key, expected, raw) => (await count(SQL.replace, [raw, key, expected])) === 1,
    sweep: (prefix, now) => count(SQL.sweep, [prefix, prefixEnd(prefix), now]),
    async ping() {
      await query("SELECT 1");
    },
    async close() {
      if (closed) return;
      closed = true;
      // sqlite3 closes once the statements queued on the connection have run.
      await adapter.disconnect();
    },
  };
}
