import {
  CorruptValue,
  createKeyv,
  deserialize,
  Serialized,
  type Stored,
  serialize,
} from "./backends/keyv-adapter.ts";
import { type Backend, expiresOf } from "./backends/types.ts";
import { causeText, isCorrupt, STORE_ERROR_CODES, StoreError, type StoreOp } from "./errors.ts";
import { GroupWriter } from "./group.ts";
import type { KeyValueStore, ListOptions } from "./kv-api.ts";

// The interface (its contract documented there); this file implements it over keyv.
export type { KeyValueStore, ListOptions } from "./kv-api.ts";

/** Postgres's column is VARCHAR(255); the same bound everywhere keeps backends interchangeable. */
export const MAX_KEY_LENGTH = 255;

/**
 * The bound of every store operation, on every backend. A healthy store answers in
 * milliseconds (a group of a few hundred outbox writes, a listing of a thousand items); a store
 * that does not answer in 2 s is treated as down for that call (StoreError `store_timeout`), so
 * a frozen server costs the webhook route at most two bounded calls (subscription lookup, then
 * the outbox write): a 503 within 5 s, and `/readyz` answers 503 within 2 s.
 */
export const STORE_OP_TIMEOUT_MS = 2_000;
/** Bulk housekeeping (a team's keys on uninstall, purging expired entries) may take longer. */
export const STORE_BULK_TIMEOUT_MS = 30_000;

/** Keys starting with this are the store's own (Redis keeps its index there). */
export const RESERVED_KEY_PREFIX = "~";

export interface KeyValueOptions {
  /** Default STORE_OP_TIMEOUT_MS. */
  opTimeoutMs?: number;
  /** Default STORE_BULK_TIMEOUT_MS. */
  bulkTimeoutMs?: number;
}

export function createKeyValueStore(
  backend: Backend,
  namespace: string | undefined,
  options: KeyValueOptions = {},
): KeyValueStore {
  const ns = namespace ? `${namespace}:` : "";
  const keyv = createKeyv(backend, ns);
  const opMs = options.opTimeoutMs ?? STORE_OP_TIMEOUT_MS;
  const bulkMs = options.bulkTimeoutMs ?? STORE_BULK_TIMEOUT_MS;
  let closed = false;

  const short = (k: string | undefined) => (k === undefined ? undefined : k.slice(ns.length));

  function timeoutError(op: StoreOp, key: string | undefined, ms: number): StoreError {
    return new StoreError(
      STORE_ERROR_CODES.timeout,
      op,
      backend.label,
      key,
      `no answer within ${ms} ms`,
    );
  }

  function wrap(op: StoreOp, key: string | undefined, err: unknown): StoreError {
    if (err instanceof StoreError) return err;
    if (err instanceof CorruptValue) {
      return new StoreError(STORE_ERROR_CODES.corrupt, op, backend.label, key, err.message, {
        cause: err.cause,
      });
    }
    return new StoreError(
      isTimeout(err) ? STORE_ERROR_CODES.timeout : STORE_ERROR_CODES.unavailable,
      op,
      backend.label,
      key,
      causeText(err),
      { cause: err },
    );
  }

  function fail(op: StoreOp, key: string | undefined, err: unknown): never {
    throw wrap(op, key, err);
  }

  /**
   * `p`, or a `store_timeout` StoreError once `ms` have passed. keyv and its adapters have no
   * deadline of their own (a Redis command already sent, or a query to a frozen server, waits as
   * long as the socket lives), so every keyv and backend call is raced here. The call itself goes
   * on (nothing can take back a command already sent); its late answer is ignored.
   */
  function bounded<T>(op: StoreOp, key: string | undefined, p: Promise<T>, ms = opMs): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(timeoutError(op, key, ms)), ms);
      p.then(
        (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(wrap(op, key, err));
        },
      );
    });
  }

  const writer = new GroupWriter({
    write: (entries) =>
      keyv
        .setMany(
          entries.map((e) =>
            e.ttlMs === undefined
              ? { key: e.key, value: new Serialized(e.raw) }
              : { key: e.key, value: new Serialized(e.raw), ttl: e.ttlMs },
          ),
        )
        .then(() => undefined),
    maxBatch: backend.maxBatch,
    maxInFlight: backend.maxInFlight,
    timeoutMs: opMs,
    onTimeout: (k) => timeoutError("set", short(k), opMs),
    onFailure: (err, keys) => wrap("set", keys.length === 1 ? short(keys[0]) : undefined, err),
  });

  /** The stored text of a value and its expiry; a value that cannot be stored throws. */
  function rawOf(key: string, value: unknown, ttlMs: number | undefined) {
    if (value === undefined) {
      throw new StoreError(STORE_ERROR_CODES.invalid, "set", backend.label, key, "undefined value");
    }
    if (ttlMs !== undefined && !(Number.isFinite(ttlMs) && ttlMs > 0)) {
      throw new StoreError(STORE_ERROR_CODES.invalid, "set", backend.label, key, "bad ttl");
    }
    const ms = ttlMs === undefined ? undefined : Math.ceil(ttlMs);
    try {
      return {
        raw: serialize(ms === undefined ? { value } : { value, expires: Date.now() + ms }),
        ms,
      };
    } catch (cause) {
      const why = "value is not serialisable as JSON";
      throw new StoreError(STORE_ERROR_CODES.invalid, "set", backend.label, key, why, { cause });
    }
  }

  /** A delete or claim of a key with a write queued waits for it: issue order holds. */
  async function afterWritesTo(key: string, prefix = false): Promise<void> {
    if (writer.touches(key, prefix)) await writer.settled();
  }

  function closedError(op: StoreOp, key: string | undefined): StoreError {
    return new StoreError(STORE_ERROR_CODES.closed, op, backend.label, key, "store is closed");
  }

  function full(op: StoreOp, key: string): string {
    if (closed) throw closedError(op, key);
    if (typeof key !== "string" || key === "") {
      throw new StoreError(STORE_ERROR_CODES.invalid, op, backend.label, key, "empty key");
    }
    if (key.startsWith(RESERVED_KEY_PREFIX)) {
      throw new StoreError(
        STORE_ERROR_CODES.invalid,
        op,
        backend.label,
        key,
        `keys starting with "${RESERVED_KEY_PREFIX}" are the store's own`,
      );
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
    if (closed) throw closedError(op, prefix);
    return ns + prefix;
  }

  function parse<T>(op: StoreOp, key: string, raw: string): Stored<T> | undefined {
    try {
      return deserialize<T>(raw);
    } catch (err) {
      throw wrap(op, key, err);
    }
  }

  async function live<T>(
    prefix: string,
    opts: ListOptions,
  ): Promise<Array<[key: string, raw: string, value: T]>> {
    const p = fullPrefix("list", prefix);
    const after = opts.after === undefined ? undefined : ns + opts.after;
    const scan = { reverse: opts.reverse ?? false, limit: opts.limit, after };
    const rows = await bounded("list", prefix, backend.scan(p, scan));
    const now = Date.now();
    const out: Array<[string, string, T]> = [];
    for (const [k, raw] of rows) {
      const exp = expiresOf(raw);
      if (exp !== undefined && now > exp) continue;
      const key = k.slice(ns.length);
      let stored: Stored<T> | undefined;
      try {
        stored = parse<T>("list", key, raw);
      } catch (err) {
        if (!opts.unreadable || !isCorrupt(err)) throw err;
        opts.unreadable(key, err);
        continue;
      }
      if (stored) out.push([key, raw, stored.value]);
    }
    return out;
  }

  return {
    kind: backend.kind,
    namespace,
    keyv,

    async get<T>(key: string): Promise<T | undefined> {
      const k = full("get", key);
      return ((await bounded("get", key, keyv.get<T>(k))) ?? undefined) as T | undefined;
    },

    set(key, value, ttlMs) {
      // Not async (the webhook path): the writer's promise as it is; bad input still rejects.
      try {
        const k = full("set", key);
        const { raw, ms } = rawOf(key, value, ttlMs);
        return writer.write(k, raw, ms);
      } catch (err) {
        return Promise.reject(err);
      }
    },

    async update<T>(
      key: string,
      next: (value: T) => { value: unknown; ttlMs?: number | undefined } | undefined,
    ) {
      const k = full("set", key);
      await afterWritesTo(k);
      // The stored text itself (the adapter's get, under keyv's): compare-and-set compares it.
      const before = await bounded("get", key, backend.get(k));
      if (before === undefined) return false;
      const stored = parse<T>("get", key, before);
      if (stored === undefined) return false;
      const wanted = next(stored.value as T);
      if (wanted === undefined) return false;
      const { raw, ms } = rawOf(key, wanted.value, wanted.ttlMs);
      return bounded("set", key, backend.replace(k, before, raw, ms, Date.now()));
    },

    async delete(key) {
      const k = full("delete", key);
      await afterWritesTo(k);
      return bounded("delete", key, keyv.delete(k));
    },

    async keys(prefix) {
      return (await live(prefix, {})).map(([k]) => k);
    },

    async entries<T>(prefix: string, opts: ListOptions = {}) {
      return (await live<T>(prefix, opts)).map(([k, , v]) => [k, v] as [string, T]);
    },

    async deleteMany(keys) {
      const ks = keys.map((k) => full("delete", k));
      if (ks.length === 0) return 0;
      if (ks.some((k) => writer.touches(k))) await writer.settled();
      return bounded("delete", undefined, backend.deleteKeys(ks));
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
      await afterWritesTo(p, true);
      return bounded("delete", prefix, backend.deletePrefix(p), bulkMs);
    },

    async claimOnce(key, ttlMs, value = true) {
      const k = full("claim", key);
      if (!(Number.isFinite(ttlMs) && ttlMs > 0)) {
        throw new StoreError(STORE_ERROR_CODES.invalid, "claim", backend.label, key, "bad ttl");
      }
      await afterWritesTo(k);
      const now = Date.now();
      const ms = Math.ceil(ttlMs);
      const raw = serialize({ value, expires: now + ms });
      return bounded("claim", key, backend.claim(k, raw, ms, now));
    },

    async sweepExpired() {
      const p = fullPrefix("sweep", "");
      return bounded("sweep", undefined, backend.sweep(p, Date.now()), bulkMs);
    },

    async ping() {
      if (closed) throw closedError("ping", undefined);
      await bounded("ping", undefined, backend.ping());
    },

    pendingWrites: () => writer.size,

    async close() {
      if (closed) return;
      closed = true;
      // Writes already accepted get their answer before the connection goes.
      await writer.settled();
      try {
        await keyv.disconnect();
      } catch (err) {
        fail("close", undefined, err);
      }
    },
  };
}

/** A driver's own timeout (pg's query and connect timeouts, SQLite's busy wait, Redis's). */
function isTimeout(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  // 57014: statement_timeout; 55P03: lock_timeout; SQLITE_BUSY: busy_timeout ran out.
  if (code === "57014" || code === "55P03" || code === "SQLITE_BUSY") return true;
  return /timeout|timed out/i.test(err.message) || err.name === "TimeoutError";
}
