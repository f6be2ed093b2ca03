import type { Keyv } from "keyv";
import type { BackendKind } from "./backends/types.ts";
import type { StoreError } from "./errors.ts";

/**
 * The raw key-value layer every repository sits on: a `Keyv` instance (keyv 5) whose storage
 * adapter (backends/keyv-adapter.ts) sits on the official adapter of STORE_URL's scheme. Reads go
 * through `keyv.get`, group writes through `keyv.setMany`, deletes through `keyv.delete`; what
 * keyv's API has no word for (prefix listings, claims, compare-and-set, purging, counts of
 * what a bulk delete removed) goes to the backend under the same adapter, on the same
 * connection. Keys are the logical keys of records.ts (`install:T1`, `sub:abc`, …); the store adds
 * its namespace in front. Every failure is a StoreError: an unreachable backend never reads as
 * "not found" (keyv is told to throw: by default it answers a failed read with undefined).
 */
export interface KeyValueStore {
  readonly kind: BackendKind;
  /** The keyv instance every record goes through (for operators' tooling and tests). */
  readonly keyv: Keyv;
  /** Prefix of every key this store touches (tests use one per file); undefined = none. */
  readonly namespace: string | undefined;
  get<T>(key: string): Promise<T | undefined>;
  /**
   * `ttlMs`: the value disappears after that long (native TTL on Redis, checked on read
   * elsewhere). Group-committed: resolves once the write that holds it has committed, with every
   * other set issued meanwhile (see group.ts); rejects when that write failed.
   */
  set(key: string, value: unknown, ttlMs?: number): Promise<void>;
  /**
   * Compare-and-set: `next` gets the stored value, and what it returns is written only if the
   * key still holds what was read, in one atomic step on the backend. False when the key changed
   * meanwhile (the other writer wins), is gone, or `next` returned undefined.
   */
  update<T>(
    key: string,
    next: (value: T) => { value: unknown; ttlMs?: number | undefined } | undefined,
  ): Promise<boolean>;
  /** True when something was deleted. */
  delete(key: string): Promise<boolean>;
  /** Live keys starting with `prefix`, in byte order. */
  keys(prefix: string): Promise<string[]>;
  /** Live entries starting with `prefix`, in byte order of their keys (or reversed). */
  entries<T>(prefix: string, opts?: ListOptions): Promise<Array<[key: string, value: T]>>;
  deleteMany(keys: readonly string[]): Promise<number>;
  /** Deletes every key starting with `prefix`; returns how many. */
  deletePrefix(prefix: string): Promise<number>;
  /**
   * True for exactly one caller among all processes sharing the backend, until `ttlMs` has
   * passed; after that the key can be claimed again. For "do this once" (deduplication, leases).
   * `value` (default true) is what the key holds meanwhile: a lease keeps its owner there, so
   * that only the owner extends it (`update`) or gives it back.
   */
  claimOnce(key: string, ttlMs: number, value?: unknown): Promise<boolean>;
  /** Removes expired entries that nobody read since they expired (SQL and memory backends). */
  sweepExpired(): Promise<number>;
  /** Resolves when the backend answers; rejects with a StoreError otherwise. */
  ping(): Promise<void>;
  /** Sets queued or in flight, not yet committed (a frozen store shows here first). */
  pendingWrites(): number;
  /** Waits for the writes in flight (bounded), then closes. */
  close(): Promise<void>;
}

export interface ListOptions {
  /** Newest-first listings over time-ordered keys. */
  reverse?: boolean;
  limit?: number;
  /** Only keys after this one (exclusive; ascending listings), at the caller's level of key. */
  after?: string | undefined;
  /**
   * Given, a record that cannot be read (its stored text is not a value, it fails its schema, no
   * key opens it) is handed here with its key, at the caller's level, and left out; the listing
   * goes on. Without it, the listing throws as get does. For listings that serve many records
   * (every event's work marker, say), where one bad record must not hide the others. The record
   * itself stays as it is. With `limit`, a page can then hold fewer than `limit` records with
   * more after it: a caller that pages by count must not read a short page as the end.
   */
  unreadable?: ((key: string, err: StoreError) => void) | undefined;
}
