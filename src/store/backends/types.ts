import type { KeyvStoreAdapter } from "keyv";
import type { Logger } from "../../log.ts";

export type BackendKind = "sqlite" | "redis" | "postgres" | "memory";

/**
 * What each backend gives the store, on the official keyv adapter of its scheme (`adapter`, whose
 * connection every operation here uses): raw values by key, atomic group writes, prefix
 * listings served by an index, atomic claims, bulk deletes. The store's keyv instance reaches
 * these through its storage adapter (keyv-adapter.ts); the ones keyv's interface has no word for
 * (listings by prefix, claims, compare-and-set, purging) the store calls directly.
 *
 * Keys here are full keys (namespace included). Values are keyv's serialised form,
 * `{"value":…,"expires":epochMs?}` as JSON text, in keyv's table layout (`keyv(key, value)`) on
 * SQL: data written by earlier versions reads back unchanged. keyv serialises; backends only
 * move text.
 */
export interface Backend {
  readonly kind: BackendKind;
  /** The official keyv adapter holding the connection; none for memory://. */
  readonly adapter: KeyvStoreAdapter | undefined;
  /** Where it points, for messages: never a password. */
  readonly label: string;
  /** The most entries one `write` takes (one statement, one script). */
  readonly maxBatch: number;
  /** Group writes in flight at once (see group.ts). */
  readonly maxInFlight: number;
  /** The raw value, or undefined. Expiry is the caller's to check (SQL keeps expired rows). */
  get(key: string): Promise<string | undefined>;
  /**
   * Writes every entry in one atomic step: all of them are committed when it resolves, none
   * when it rejects (one SQLite statement, one Redis script, one Postgres statement). Keys are
   * distinct.
   */
  write(entries: readonly WriteEntry[]): Promise<void>;
  /** True when something was deleted. */
  delete(key: string): Promise<boolean>;
  /** Entries whose key starts with `prefix`, in byte order of the key (reversed if asked). */
  scan(prefix: string, opts: ScanOptions): Promise<Array<[key: string, raw: string]>>;
  deleteKeys(keys: readonly string[]): Promise<number>;
  deletePrefix(prefix: string): Promise<number>;
  /**
   * Writes `raw` at `key` unless a value is there that has not expired by `now`; true when
   * this call wrote it. One atomic step on the backend, so it holds across processes.
   */
  claim(key: string, raw: string, ttlMs: number, now: number): Promise<boolean>;
  /**
   * Writes `raw` (expiring after `ttlMs`, if given) at `key` only while the key still holds
   * `expected`; true when it did. One atomic step (compare-and-set).
   */
  replace(
    key: string,
    expected: string,
    raw: string,
    ttlMs: number | undefined,
    now: number,
  ): Promise<boolean>;
  /**
   * Removes entries under `prefix` whose `expires` is before `now` (Redis: drops keys that
   * expired natively from its index). Returns how many went.
   */
  sweep(prefix: string, now: number): Promise<number>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface WriteEntry {
  readonly key: string;
  readonly raw: string;
  /** Native expiry (Redis); SQL backends read `expires` from the value instead. */
  readonly ttlMs: number | undefined;
}

export interface ScanOptions {
  reverse: boolean;
  /**
   * Only keys after this one (byte order, exclusive), in ascending listings: a walk that skips
   * ahead (the outbox's sweep steps from one event's records to the next). Undefined: from the
   * prefix.
   */
  after?: string | undefined;
  /**
   * undefined = all. SQL and memory apply it before the store drops rows whose `expires` has
   * passed (few: the sweeper purges them); Redis counts only keys that still exist.
   */
  limit: number | undefined;
}

export interface BackendOptions {
  logger?: Logger | undefined;
  /** How long the first connection may take before the store reports it unavailable. */
  connectTimeoutMs: number;
  /**
   * The bound of one operation (see STORE_OP_TIMEOUT_MS): backends set their own timeouts to
   * it (Redis has none for a command already sent; Postgres statement, query and pool
   * timeouts; SQLite's busy timeout) so that a connection stuck on a frozen server is let go.
   */
  opTimeoutMs: number;
  /** The bound of bulk housekeeping (deletePrefix, sweep), which may read many rows. */
  bulkTimeoutMs: number;
  /** The store's key prefix (`ns:`), or "" — Redis keeps its index beside the namespace. */
  keyPrefix: string;
  /**
   * SQLite: the write-ahead log's size in pages at which a commit of this connection copies it
   * into the database (`wal_autocheckpoint`); undefined = SQLite's own (1,000). Other backends
   * ignore it.
   */
  checkpointPages?: number | undefined;
}

/** The exclusive upper bound of keys starting with `prefix` in byte (and code point) order. */
export function prefixEnd(prefix: string): string {
  return `${prefix}\u{10FFFF}`;
}

/**
 * A listing's `after`, when it narrows the prefix's range: undefined when absent or before the
 * prefix (then the listing starts at the prefix). Ascending listings only.
 */
export function afterIn(prefix: string, o: ScanOptions): string | undefined {
  if (o.after === undefined || o.after < prefix) return undefined;
  if (o.reverse) throw new Error("a listing after a key is ascending");
  return o.after;
}

/** keyv's serialiser: plain JSON. */
export const serialize = (data: unknown): string => JSON.stringify(data);
export const deserialize = <T>(raw: string): T => JSON.parse(raw) as T;

/** `raw`'s `expires` (epoch ms) without parsing the whole value: it is always the last member. */
export function expiresOf(raw: string): number | undefined {
  // Only the tail can hold it (`,"expires":` + at most 16 digits + `}`): a 100 KB live record
  // is not scanned.
  const m = /,"expires":(\d+)\}$/.exec(raw.length > 40 ? raw.slice(-40) : raw);
  return m ? Number(m[1]) : undefined;
}
