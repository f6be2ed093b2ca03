import type { Backend, BackendKind } from "./backends/types.ts";
import { deserialize, expiresOf, serialize } from "./backends/types.ts";
import { causeText, STORE_ERROR_CODES, StoreError, type StoreOp } from "./errors.ts";

/**
 * The raw key-value layer every repository sits on. Keys are the logical keys of DESIGN.md
 * (`install:T1`, `sub:abc`, …); the store adds its namespace in front. Every failure is a
 * StoreError: an unreachable backend never reads as "not found".
 */
export interface KeyValueStore {
  readonly kind: BackendKind;
  /** Prefix of every key this store touches (tests use one per file); undefined = none. */
  readonly namespace: string | undefined;
  get<T>(key: string): Promise<T | undefined>;
  /** `ttlMs`: the value disappears after that long (native TTL on Redis, checked on read elsewhere). */
  set(key: string, value: unknown, ttlMs?: number): Promise<void>;
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
   */
  claimOnce(key: string, ttlMs: number): Promise<boolean>;
  /** Removes expired entries that nobody read since they expired (SQL and memory backends). */
  sweepExpired(): Promise<number>;
  /** Resolves when the backend answers; rejects with a StoreError otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface ListOptions {
  /** Newest-first listings over time-ordered keys. */
  reverse?: boolean;
  limit?: number;
}

/** Postgres's column is VARCHAR(255); the same bound everywhere keeps backends interchangeable. */
export const MAX_KEY_LENGTH = 255;

interface Stored<T> {
  value: T;
  expires?: number;
}

export function createKeyValueStore(
  backend: Backend,
  namespace: string | undefined,
): KeyValueStore {
  const ns = namespace ? `${namespace}:` : "";
  const { keyv } = backend;
  let closed = false;

  function fail(op: StoreOp, key: string | undefined, err: unknown): never {
    if (err instanceof StoreError) throw err;
    throw new StoreError(STORE_ERROR_CODES.unavailable, op, backend.label, key, causeText(err), {
      cause: err,
    });
  }

  function full(op: StoreOp, key: string): string {
    if (closed) {
      throw new StoreError(STORE_ERROR_CODES.closed, op, backend.label, key, "store is closed");
    }
    if (typeof key !== "string" || key === "") {
      throw new StoreError(STORE_ERROR_CODES.invalid, op, backend.label, key, "empty key");
    }
    const k = ns + key;
    if (k.length > MAX_KEY_LENGTH) {
      throw new StoreError(
        STORE_ERROR_CODES.invalid,
        op,
        backend.label,
        key,
        `key longer than ${MAX_KEY_LENGTH} characters`,
      );
    }
    return k;
  }

  function fullPrefix(op: StoreOp, prefix: string): string {
    if (closed) {
      throw new StoreError(STORE_ERROR_CODES.closed, op, backend.label, prefix, "store is closed");
    }
    return ns + prefix;
  }

  async function live<T>(
    prefix: string,
    opts: ListOptions,
  ): Promise<Array<[key: string, raw: string, value: T]>> {
    const p = fullPrefix("list", prefix);
    let rows: Array<[string, string]>;
    try {
      rows = await backend.scan(p, { reverse: opts.reverse ?? false, limit: opts.limit });
    } catch (err) {
      fail("list", prefix, err);
    }
    const now = Date.now();
    const out: Array<[string, string, T]> = [];
    for (const [k, raw] of rows) {
      const exp = expiresOf(raw);
      if (exp !== undefined && now > exp) continue;
      let parsed: Stored<T>;
      try {
        parsed = deserialize<Stored<T>>(raw);
      } catch (err) {
        throw new StoreError(
          STORE_ERROR_CODES.corrupt,
          "list",
          backend.label,
          k.slice(ns.length),
          "stored value is not JSON",
          { cause: err },
        );
      }
      out.push([k.slice(ns.length), raw, parsed.value]);
    }
    return out;
  }

  return {
    kind: backend.kind,
    namespace,

    async get<T>(key: string): Promise<T | undefined> {
      const k = full("get", key);
      try {
        return (await keyv.get<T>(k)) ?? undefined;
      } catch (err) {
        if (err instanceof SyntaxError) {
          throw new StoreError(
            STORE_ERROR_CODES.corrupt,
            "get",
            backend.label,
            key,
            "stored value is not JSON",
            { cause: err },
          );
        }
        fail("get", key, err);
      }
    },

    async set(key, value, ttlMs) {
      const k = full("set", key);
      if (value === undefined) {
        throw new StoreError(
          STORE_ERROR_CODES.invalid,
          "set",
          backend.label,
          key,
          "undefined value",
        );
      }
      if (ttlMs !== undefined && !(Number.isFinite(ttlMs) && ttlMs > 0)) {
        throw new StoreError(STORE_ERROR_CODES.invalid, "set", backend.label, key, "bad ttl");
      }
      let ok: boolean;
      try {
        ok = await keyv.set(k, value, ttlMs);
      } catch (err) {
        fail("set", key, err);
      }
      if (!ok) fail("set", key, new Error("the backend did not accept the write"));
    },

    async delete(key) {
      const k = full("delete", key);
      try {
        return await keyv.delete(k);
      } catch (err) {
        fail("delete", key, err);
      }
    },

    async keys(prefix) {
      return (await live(prefix, {})).map(([k]) => k);
    },

    async entries<T>(prefix: string, opts: ListOptions = {}) {
      return (await live<T>(prefix, opts)).map(([k, , v]) => [k, v] as [string, T]);
    },

    async deleteMany(keys) {
      const ks = keys.map((k) => full("delete", k));
      try {
        return await backend.deleteKeys(ks);
      } catch (err) {
        fail("delete", undefined, err);
      }
    },

    async deletePrefix(prefix) {
      const p = fullPrefix("delete", prefix);
      if (p === "") {
        // Would wipe every namespace sharing the backend.
        throw new StoreError(
          STORE_ERROR_CODES.invalid,
          "delete",
          backend.label,
          prefix,
          "refusing to delete with an empty prefix and no namespace",
        );
      }
      try {
        return await backend.deletePrefix(p);
      } catch (err) {
        fail("delete", prefix, err);
      }
    },

    async claimOnce(key, ttlMs) {
      const k = full("claim", key);
      if (!(Number.isFinite(ttlMs) && ttlMs > 0)) {
        throw new StoreError(STORE_ERROR_CODES.invalid, "claim", backend.label, key, "bad ttl");
      }
      const now = Date.now();
      const ms = Math.ceil(ttlMs);
      try {
        return await backend.claim(k, serialize({ value: true, expires: now + ms }), ms, now);
      } catch (err) {
        fail("claim", key, err);
      }
    },

    async sweepExpired() {
      const p = fullPrefix("sweep", "");
      try {
        return await backend.sweep(p, Date.now());
      } catch (err) {
        fail("sweep", undefined, err);
      }
    },

    async ping() {
      if (closed) {
        throw new StoreError(
          STORE_ERROR_CODES.closed,
          "ping",
          backend.label,
          undefined,
          "store is closed",
        );
      }
      try {
        await backend.ping();
      } catch (err) {
        fail("ping", undefined, err);
      }
    },

    async close() {
      if (closed) return;
      closed = true;
      try {
        await backend.close();
      } catch (err) {
        fail("close", undefined, err);
      }
    },
  };
}
