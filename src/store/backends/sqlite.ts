import { EventEmitter } from "node:events";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { Keyv, type KeyvStoreAdapter } from "keyv";
import sqlite3 from "sqlite3";
import {
  type Backend,
  type BackendOptions,
  KEYV_OPTIONS,
  prefixEnd,
  type ScanOptions,
} from "./types.ts";

/**
 * SQLite, the embedded default. One connection per store in WAL mode with
 * `synchronous=NORMAL`: a commit survives a crash or `kill -9` of the process (it is in the
 * WAL, written before the call returns) and only an OS crash or power cut can lose the last
 * commits, which is the trade every embedded store makes for speed. Other processes may
 * open the same file; `busy_timeout` makes them wait for the write lock instead of failing.
 *
 * The table is @keyv/sqlite's layout (`keyv(key, value)`), but the adapter is ours: it keeps
 * prepared statements and group-commits writes. Every `set` issued in one turn of the event
 * loop goes out as one multi-row upsert, one transaction and one trip to the thread pool, which
 * is what lets webhook ingest store each message before acknowledging it at thousands per
 * second. @keyv/sqlite prepares every statement anew and cannot set the journal mode.
 */

const TABLE = "keyv";
/** Rows per multi-row upsert; one prepared statement per row count up to this. */
const CHUNK = 64;
export const DEFAULT_BUSY_TIMEOUT_MS = 5_000;

type Db = sqlite3.Database;
type Stmt = sqlite3.Statement;

interface PendingWrite {
  value: string;
  waiters: Array<{ resolve: () => void; reject: (e: Error) => void }>;
}

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

class SqliteAdapter extends EventEmitter implements KeyvStoreAdapter {
  readonly opts: { dialect: "sqlite"; url: string };
  namespace?: string | undefined;
  private pending = new Map<string, PendingWrite>();
  private scheduled = false;
  private closed = false;

  constructor(
    private readonly db: Db,
    /** upserts[n - 1] writes n rows. */
    private readonly upserts: readonly Stmt[],
    private readonly stmts: Record<
      "get" | "del" | "delMany" | "delRange" | "scanAsc" | "scanDesc" | "claim" | "sweep" | "ping",
      Stmt
    >,
    path: string,
  ) {
    super();
    this.opts = { dialect: "sqlite", url: `sqlite://${path}` };
  }

  async get<Value>(key: string): Promise<Value | undefined> {
    const rows = await all<{ value: string }>(this.stmts.get, undefined, [key]);
    return rows[0]?.value as Value | undefined;
  }

  /** keyv computes expiry into the value; SQLite has no TTL of its own. */
  set(key: string, value: string): Promise<void> {
    if (this.closed) return Promise.reject(new Error("database is closed"));
    return new Promise((resolve, reject) => {
      const p = this.pending.get(key);
      if (p) {
        // The same key twice in one turn: the later value wins, as it would in sequence.
        p.value = value;
        p.waiters.push({ resolve, reject });
      } else {
        this.pending.set(key, { value, waiters: [{ resolve, reject }] });
      }
      if (!this.scheduled) {
        this.scheduled = true;
        // setImmediate, not a microtask: requests parsed in the same poll phase join the batch.
        setImmediate(() => this.flush());
      }
    });
  }

  /**
   * Sends pending writes to SQLite now. The connection is in serialized mode, so statements run
   * in the order they are issued; deletes and claims flush first, so writes already queued
   * here land before them.
   */
  flush(): void {
    this.scheduled = false;
    if (this.pending.size === 0) return;
    const batch = [...this.pending];
    this.pending = new Map();
    for (let off = 0; off < batch.length; off += CHUNK) {
      const part = batch.slice(off, off + CHUNK);
      const params: string[] = [];
      for (const [k, p] of part) params.push(k, p.value);
      let stmt: Stmt;
      try {
        stmt = this.upsert(part.length);
      } catch (err) {
        for (const [, p] of part) for (const w of p.waiters) w.reject(err as Error);
        continue;
      }
      stmt.run(params, (err: Error | null) => {
        for (const [, p] of part) for (const w of p.waiters) err ? w.reject(err) : w.resolve();
      });
    }
  }

  private upsert(rows: number): Stmt {
    const stmt = this.upserts[rows - 1];
    if (!stmt) throw new Error(`no upsert statement for ${rows} rows`);
    return stmt;
  }

  async delete(key: string): Promise<boolean> {
    this.flush();
    return (await run(this.stmts.del, [key])) > 0;
  }

  async deleteMany(keys: string[]): Promise<boolean> {
    return (await this.deleteKeys(keys)) > 0;
  }

  async deleteKeys(keys: readonly string[]): Promise<number> {
    if (keys.length === 0) return 0;
    this.flush();
    return run(this.stmts.delMany, [JSON.stringify(keys)]);
  }

  async deletePrefix(prefix: string): Promise<number> {
    this.flush();
    return run(this.stmts.delRange, [prefix, prefixEnd(prefix)]);
  }

  async clear(): Promise<void> {
    await this.deletePrefix(this.namespace ? `${this.namespace}:` : "");
  }

  async scan(prefix: string, opts: ScanOptions): Promise<Array<[string, string]>> {
    const stmt = opts.reverse ? this.stmts.scanDesc : this.stmts.scanAsc;
    const rows = await all<{ key: string; value: string }>(stmt, undefined, [
      prefix,
      prefixEnd(prefix),
      opts.limit ?? -1,
    ]);
    return rows.map((r) => [r.key, r.value]);
  }

  async claim(key: string, raw: string, now: number): Promise<boolean> {
    this.flush();
    const rows = await all<{ key: string }>(this.stmts.claim, undefined, [key, raw, now]);
    return rows.length === 1;
  }

  async sweep(prefix: string, now: number): Promise<number> {
    this.flush();
    return run(this.stmts.sweep, [prefix, prefixEnd(prefix), now]);
  }

  async ping(): Promise<void> {
    await all(this.stmts.ping, undefined, []);
  }

  async disconnect(): Promise<void> {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    const stmts = [...Object.values(this.stmts), ...this.upserts];
    // Finalize queues behind any statement still running, so pending writes complete first.
    await Promise.all(stmts.map((s) => new Promise<void>((r) => s.finalize(() => r()))));
    await new Promise<void>((resolve, reject) =>
      this.db.close((err) => (err ? reject(err) : resolve())),
    );
  }
}

export async function openSqlite(path: string, _opts: BackendOptions): Promise<Backend> {
  if (path === "" || path === ":memory:" || path.startsWith("file::memory:")) {
    // An in-memory SQLite would silently lose every install on restart.
    throw new Error("sqlite:// needs a file path; use memory:// for a throwaway store");
  }
  mkdirSync(dirname(path), { recursive: true });
  const db = await open(path);
  try {
    // Serialized mode: statements run one at a time in issue order (see flush()).
    db.serialize();
    await all(db, `PRAGMA busy_timeout = ${DEFAULT_BUSY_TIMEOUT_MS}`, []);
    const mode = await all<{ journal_mode: string }>(db, "PRAGMA journal_mode = WAL", []);
    if (mode[0]?.journal_mode !== "wal") {
      throw new Error(`could not switch ${path} to WAL (journal_mode=${mode[0]?.journal_mode})`);
    }
    await all(db, "PRAGMA synchronous = NORMAL", []);
    await all(
      db,
      `CREATE TABLE IF NOT EXISTS ${TABLE}(key VARCHAR(255) PRIMARY KEY, value TEXT)`,
      [],
    );
    const range = "key >= ? AND key < ?";
    const stmts = {
      get: await prepare(db, `SELECT value FROM ${TABLE} WHERE key = ?`),
      del: await prepare(db, `DELETE FROM ${TABLE} WHERE key = ?`),
      delMany: await prepare(
        db,
        `DELETE FROM ${TABLE} WHERE key IN (SELECT value FROM json_each(?))`,
      ),
      delRange: await prepare(db, `DELETE FROM ${TABLE} WHERE ${range}`),
      scanAsc: await prepare(
        db,
        `SELECT key, value FROM ${TABLE} WHERE ${range} ORDER BY key ASC LIMIT ?`,
      ),
      scanDesc: await prepare(
        db,
        `SELECT key, value FROM ${TABLE} WHERE ${range} ORDER BY key DESC LIMIT ?`,
      ),
      // The update branch runs only over an expired claim; RETURNING yields a row only when
      // this statement inserted or took over the key.
      claim: await prepare(
        db,
        `INSERT INTO ${TABLE}(key, value) VALUES(?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value WHERE json_extract(${TABLE}.value, '$.expires') < ?3 RETURNING key`,
      ),
      sweep: await prepare(
        db,
        `DELETE FROM ${TABLE} WHERE ${range} AND json_extract(value, '$.expires') < ?`,
      ),
      ping: await prepare(db, "SELECT 1"),
    };
    // Prepared up front: sqlite3 never calls back a run whose statement failed to prepare.
    const upserts: Stmt[] = [];
    for (let rows = 1; rows <= CHUNK; rows++) {
      const values = Array.from({ length: rows }, () => "(?,?)").join(",");
      upserts.push(
        await prepare(
          db,
          `INSERT INTO ${TABLE}(key, value) VALUES ${values} ON CONFLICT(key) DO UPDATE SET value = excluded.value`,
        ),
      );
    }
    const adapter = new SqliteAdapter(db, upserts, stmts, path);
    const keyv = new Keyv({ ...KEYV_OPTIONS, store: adapter });
    return {
      kind: "sqlite",
      label: `sqlite ${path}`,
      keyv,
      scan: (prefix, o) => adapter.scan(prefix, o),
      deleteKeys: (keys) => adapter.deleteKeys(keys),
      deletePrefix: (prefix) => adapter.deletePrefix(prefix),
      claim: (key, raw, _ttl, now) => adapter.claim(key, raw, now),
      sweep: (prefix, now) => adapter.sweep(prefix, now),
      ping: () => adapter.ping(),
      close: () => adapter.disconnect(),
    };
  } catch (err) {
    await new Promise<void>((r) => db.close(() => r()));
    throw err;
  }
}
