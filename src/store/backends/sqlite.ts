import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import sqlite3 from "sqlite3";
import { type Backend, type BackendOptions, prefixEnd, type WriteEntry } from "./types.ts";

/**
 * SQLite, the embedded default. One connection per store in WAL mode with
 * `synchronous=NORMAL`: a commit survives a crash or `kill -9` of the process (it is in the
 * WAL, written before the call returns) and only an OS crash or power cut can lose the last
 * commits, which is the trade every embedded store makes for speed. Other processes may
 * open the same file; `busy_timeout` makes them wait for the write lock, up to the store's
 * bound, instead of failing at once.
 *
 * Checkpoints (copying the log into the database, which syncs both files) run in the commit
 * that finds the log past `checkpointPages`: ~10 ms here, every ~1,600 outbox rows. A store
 * opened with a large bound leaves them to another connection to the same file that commits
 * often (the live engine's, see openStore's `sqliteCheckpoints`), so that the webhook route's
 * commits, which acknowledgements wait on, never carry one.
 *
 * The table is keyv's layout (`keyv(key, value)`). Statements are prepared once. A group write
 * (see group.ts) is one multi-row upsert: one statement, so one implicit transaction, all rows
 * or none. Listings are range scans on the primary key (`key >= p AND key < p‹U+10FFFF›`), which
 * SQLite serves from the key's index (EXPLAIN QUERY PLAN: `SEARCH keyv USING INDEX
 * sqlite_autoindex_keyv_1 (key>? AND key<?)`), never LIKE, which would read the whole table.
 */

const TABLE = "keyv";
/** Rows per multi-row upsert: one prepared statement per row count up to this. */
const CHUNK = 64;

type Db = sqlite3.Database;
type Stmt = sqlite3.Statement;

function open(path: string): Promise<Db> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(path, sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE, (err) =>
      err ? reject(err) : resolve(db),
    );
  });
}

function all<R>(target: Db | Stmt, sql: string | undefined, params: unknown[]): Promise<R[]> {
  return new Promise((resolve, reject) => {
    const cb = (err: Error | null, rows: R[]) => (err ? reject(err) : resolve(rows));
    if (sql === undefined) (target as Stmt).all(params, cb);
    else (target as Db).all(sql, params, cb);
  });
}

function run(stmt: Stmt, params: unknown[]): Promise<number> {
  return new Promise((resolve, reject) => {
    stmt.run(params, function (this: sqlite3.RunResult, err: Error | null) {
      if (err) reject(err);
      else resolve(this.changes);
    });
  });
}

function prepare(db: Db, sql: string): Promise<Stmt> {
  return new Promise((resolve, reject) => {
    const stmt = db.prepare(sql, (err) => (err ? reject(err) : resolve(stmt)));
  });
}

const RANGE = "key >= ? AND key < ?";

/** The listing statement (prefix, its end, limit or -1); tests EXPLAIN it. */
export function sqliteScanSql(reverse: boolean): string {
  return `SELECT key, value FROM ${TABLE} WHERE ${RANGE} ORDER BY key ${reverse ? "DESC" : "ASC"} LIMIT ?`;
}

async function statements(db: Db) {
  const range = RANGE;
  return {
    get: await prepare(db, `SELECT value FROM ${TABLE} WHERE key = ?`),
    del: await prepare(db, `DELETE FROM ${TABLE} WHERE key = ?`),
    delMany: await prepare(
      db,
      `DELETE FROM ${TABLE} WHERE key IN (SELECT value FROM json_each(?))`,
    ),
    delRange: await prepare(db, `DELETE FROM ${TABLE} WHERE ${range}`),
    scanAsc: await prepare(db, sqliteScanSql(false)),
    scanDesc: await prepare(db, sqliteScanSql(true)),
    // The update branch runs only over an expired claim; RETURNING yields a row only when this
    // statement inserted or took over the key.
    claim: await prepare(
      db,
      `INSERT INTO ${TABLE}(key, value) VALUES(?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value WHERE json_extract(${TABLE}.value, '$.expires') < ?3 RETURNING key`,
    ),
    replace: await prepare(
      db,
      `UPDATE ${TABLE} SET value = ?1 WHERE key = ?2 AND value = ?3 RETURNING key`,
    ),
    sweep: await prepare(
      db,
      `DELETE FROM ${TABLE} WHERE ${range} AND json_extract(value, '$.expires') < ?`,
    ),
    ping: await prepare(db, "SELECT 1"),
  };
}

export async function openSqlite(path: string, opts: BackendOptions): Promise<Backend> {
  if (path === "" || path === ":memory:" || path.startsWith("file::memory:")) {
    // An in-memory SQLite would silently lose every install on restart.
    throw new Error("sqlite:// needs a file path; use memory:// for a throwaway store");
  }
  mkdirSync(dirname(path), { recursive: true });
  const db = await open(path);
  let stmts: Awaited<ReturnType<typeof statements>>;
  /** upserts[n - 1] writes n rows. */
  const upserts: Stmt[] = [];
  try {
    // Serialized mode: statements run one at a time in issue order.
    db.serialize();
    await all(db, `PRAGMA busy_timeout = ${Math.max(1, Math.floor(opts.opTimeoutMs))}`, []);
    const mode = await all<{ journal_mode: string }>(db, "PRAGMA journal_mode = WAL", []);
    if (mode[0]?.journal_mode !== "wal") {
      throw new Error(`could not switch ${path} to WAL (journal_mode=${mode[0]?.journal_mode})`);
    }
    await all(db, "PRAGMA synchronous = NORMAL", []);
    if (opts.checkpointPages !== undefined) {
      await all(
        db,
        `PRAGMA wal_autocheckpoint = ${Math.max(0, Math.floor(opts.checkpointPages))}`,
        [],
      );
    }
    await all(
      db,
      `CREATE TABLE IF NOT EXISTS ${TABLE}(key VARCHAR(255) PRIMARY KEY, value TEXT)`,
      [],
    );
    stmts = await statements(db);
    // Prepared up front: sqlite3 never calls back a run whose statement failed to prepare.
    for (let rows = 1; rows <= CHUNK; rows++) {
      const values = Array.from({ length: rows }, () => "(?,?)").join(",");
      upserts.push(
        await prepare(
          db,
          `INSERT INTO ${TABLE}(key, value) VALUES ${values} ON CONFLICT(key) DO UPDATE SET value = excluded.value`,
        ),
      );
    }
  } catch (err) {
    await new Promise<void>((r) => db.close(() => r()));
    throw err;
  }

  let closed = false;
  return {
    kind: "sqlite",
    label: `sqlite ${path}`,
    maxBatch: CHUNK,
    maxInFlight: 1,
    async get(key) {
      const rows = await all<{ value: string }>(stmts.get, undefined, [key]);
      return rows[0]?.value;
    },
    write(entries: readonly WriteEntry[]) {
      if (closed) return Promise.reject(new Error("database is closed"));
      const stmt = upserts[entries.length - 1];
      if (!stmt) return Promise.reject(new Error(`no upsert for ${entries.length} rows`));
      const params: string[] = [];
      for (const e of entries) params.push(e.key, e.raw);
      return run(stmt, params).then(() => undefined);
    },
    async delete(key) {
      return (await run(stmts.del, [key])) > 0;
    },
    async scan(prefix, o) {
      const stmt = o.reverse ? stmts.scanDesc : stmts.scanAsc;
      const rows = await all<{ key: string; value: string }>(stmt, undefined, [
        prefix,
        prefixEnd(prefix),
        o.limit ?? -1,
      ]);
      return rows.map((r) => [r.key, r.value] as [string, string]);
    },
    async deleteKeys(keys) {
      if (keys.length === 0) return 0;
      return run(stmts.delMany, [JSON.stringify(keys)]);
    },
    deletePrefix: (prefix) => run(stmts.delRange, [prefix, prefixEnd(prefix)]),
    async claim(key, raw, _ttl, now) {
      const rows = await all<{ key: string }>(stmts.claim, undefined, [key, raw, now]);
      return rows.length === 1;
    },
    async replace(key, expected, raw) {
      const rows = await all<{ key: string }>(stmts.replace, undefined, [raw, key, expected]);
      return rows.length === 1;
    },
    sweep: (prefix, now) => run(stmts.sweep, [prefix, prefixEnd(prefix), now]),
    async ping() {
      await all(stmts.ping, undefined, []);
    },
    async close() {
      if (closed) return;
      closed = true;
      const all = [...Object.values(stmts), ...upserts];
      // Finalize queues behind any statement still running, so writes in flight complete first.
      await Promise.all(all.map((s) => new Promise<void>((r) => s.finalize(() => r()))));
      await new Promise<void>((resolve, reject) =>
        db.close((err) => (err ? reject(err) : resolve())),
      );
    },
  };
}
