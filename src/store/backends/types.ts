import type { Keyv } from "keyv";
import type { Logger } from "../../log.ts";

export type BackendKind = "sqlite" | "redis" | "postgres" | "memory";

/**
 * What each backend gives the store. Plain reads and writes go through `keyv` (one Keyv per
 * store, over the backend's adapter); what keyv cannot express (prefix listing, atomic claims,
 * bulk deletes) goes to the backend natively over the same connection or pool.
 *
 * Keys here are full keys (namespace included). Values are keyv's serialised form:
 * `{"value":…,"expires":epochMs?}` as JSON text.
 */
export interface Backend {
  readonly kind: BackendKind;
  /** Where it points, for messages: never a password. */
  readonly label: string;
  readonly keyv: Keyv;
  /** Entries whose key starts with `prefix`, in byte order of the key (reversed if asked). */
  scan(prefix: string, opts: ScanOptions): Promise<Array<[key: string, raw: string]>>;
  deleteKeys(keys: readonly string[]): Promise<number>;
  deletePrefix(prefix: string): Promise<number>;
  /**
   * Writes `raw` at `key` unless a value is there that has not expired by `now`; true when
   * this call wrote it. One atomic step on the backend, so it holds across processes.
   */
  claim(key: string, raw: string, ttlMs: number, now: number): Promise<boolean>;
  /** Removes entries under `prefix` whose `expires` is before `now`; backends with native TTL return 0. */
  sweep(prefix: string, now: number): Promise<number>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface ScanOptions {
  reverse: boolean;
  /** undefined = all. Applied before expired entries are filtered out. */
  limit: number | undefined;
}

export interface BackendOptions {
  logger?: Logger | undefined;
  /** How long a connection attempt may take before the store reports it unavailable. */
  connectTimeoutMs: number;
}

/** The exclusive upper bound of keys starting with `prefix` in byte (and code point) order. */
export function prefixEnd(prefix: string): string {
  return `${prefix}\u{10FFFF}`;
}

/** keyv's serialiser: plain JSON. @keyv/serialize walks every value in JS and is slower. */
export const serialize = (data: unknown): string => JSON.stringify(data);
export const deserialize = <T>(raw: string): T => JSON.parse(raw) as T;

/** keyv options shared by every backend: errors thrown, no keyv-level key prefix. */
export const KEYV_OPTIONS = {
  throwOnErrors: true,
  useKeyPrefix: false,
  // Our own `namespace:` prefix is applied by the store, uniformly across backends; keyv's
  // default namespace ("keyv") would add a second one and make Redis prefix keys again.
  namespace: "",
  serialize,
  deserialize,
  stats: false,
} as const;

/** `raw`'s `expires` (epoch ms) without parsing the whole value: it is always the last member. */
export function expiresOf(raw: string): number | undefined {
  const m = /,"expires":(\d+)\}$/.exec(raw);
  return m ? Number(m[1]) : undefined;
}
