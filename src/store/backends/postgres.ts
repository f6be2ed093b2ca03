import KeyvPostgres from "@keyv/postgres";
import { Keyv } from "keyv";
import pg from "pg";
import { causeText } from "../errors.ts";
import {
  type Backend,
  type BackendOptions,
  KEYV_OPTIONS,
  prefixEnd,
  type ScanOptions,
} from "./types.ts";

/**
 * Postgres over @keyv/postgres's table layout. The pool is ours, not the adapter's: the
 * adapter keeps one module-wide pool per URI (two stores on one URI would share it and closing
 * one would end the other's), attaches no `error` listener (an idle connection dropped by the
 * server would crash the process) and has no connection timeout.
 *
 * Key order is byte order (`COLLATE "C"`) whatever the database's locale, so listings match
 * SQLite and Redis; the index on that collation serves prefix ranges.
 */

const TABLE = "keyv";

export function postgresLabel(url: string): string {
  try {
    const u = new URL(url);
    return `postgres ${u.host}${u.pathname}`;
  } catch {
    return "postgres";
  }
}

/** Concurrent `CREATE … IF NOT EXISTS` from parallel starts can still collide on the catalog. */
const RACE_CODES = new Set(["23505", "42P07"]);

export async function openPostgres(url: string, opts: BackendOptions): Promise<Backend> {
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    connectionTimeoutMillis: opts.connectTimeoutMs,
    idleTimeoutMillis: 30_000,
  });
  const label = postgresLabel(url);
  pool.on("error", (err) => {
    // An idle client lost its connection; the pool replaces it on the next query.
    opts.logger?.warn({ store: label, reason: causeText(err) }, "postgres store connection lost");
  });
  const q = async <R extends pg.QueryResultRow>(name: string, text: string, values: unknown[]) =>
    // Named: each pooled connection parses the statement once.
    pool.query<R>({ name, text, values });

  try {
    for (const ddl of [
      `CREATE TABLE IF NOT EXISTS ${TABLE}(key VARCHAR(255) PRIMARY KEY, value TEXT)`,
      `CREATE INDEX IF NOT EXISTS ${TABLE}_key_c ON ${TABLE} (key COLLATE "C")`,
    ]) {
      try {
        await pool.query(ddl);
      } catch (err) {
        if (!RACE_CODES.has((err as { code?: string }).code ?? "")) throw err;
      }
    }
  } catch (err) {
    await pool.end().catch(() => {});
    throw err;
  }

  class PooledKeyvPostgres extends KeyvPostgres {
    override async connect() {
      return async (sql: string, values?: unknown[]) => (await pool.query(sql, values)).rows;
    }
    override async disconnect() {
      // The store ends the pool.
    }
  }
  const adapter = new PooledKeyvPostgres({ table: TABLE });
  adapter.on("error", () => {});
  const keyv = new Keyv({ ...KEYV_OPTIONS, store: adapter });
  const range = `key COLLATE "C" >= $1 AND key COLLATE "C" < $2`;

  return {
    kind: "postgres",
    label,
    keyv,
    async scan(prefix: string, o: ScanOptions) {
      const dir = o.reverse ? "DESC" : "ASC";
      const r = await q<{ key: string; value: string }>(
        `onair_scan_${dir}`,
        `SELECT key, value FROM ${TABLE} WHERE ${range} ORDER BY key COLLATE "C" ${dir} LIMIT $3`,
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
      const r = await q("onair_del_range", `DELETE FROM ${TABLE} WHERE ${range}`, [
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
    async sweep(prefix, now) {
      const r = await q(
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
