import { EventEmitter } from "node:events";
import { Keyv, type KeyvEntry, type KeyvStoreAdapter } from "keyv";
import type { Backend, ScanOptions } from "./types.ts";

/**
 * The storage adapter the store's keyv instance is built on: keyv's own adapter interface
 * (`KeyvStoreAdapter`) over a backend, which itself sits on the official adapter of its scheme
 * and its connection (backends/*.ts). It exists because the official adapters miss what the
 * store promises and keyv routes through the adapter: `setMany` as ONE atomic write (SQLite's
 * adapter has none, Redis's cannot update the listing index in the same step, Postgres's locks
 * rows in arrival order), deletes that keep Redis's index true, and a `clear` that removes this
 * store's keys only (on a shared Redis the official one would SCAN every key of the database).
 * The extensions keyv has no word for (prefix listings, claims, compare-and-set, purging) are
 * reached through `backend`.
 *
 * Keys arrive whole: the store's keyv has no namespace of its own (kv.ts prefixes keys itself),
 * so `namespace` here only scopes `clear` and `iterator`, as keyv expects of an adapter.
 */
export class OnAirKeyvAdapter extends EventEmitter implements KeyvStoreAdapter {
  /** keyv reads `dialect` (and `url`) to decide whether the adapter can iterate. */
  readonly opts: { dialect: string; url: string };
  namespace?: string | undefined;

  constructor(
    readonly backend: Backend,
    /** The store's own key prefix (`ns:` or ""): what `clear` removes. */
    private readonly keyPrefix: string,
  ) {
    super();
    this.opts = { dialect: backend.kind, url: backend.label };
  }

  async get<Value>(key: string): Promise<Value | undefined> {
    return (await this.backend.get(key)) as Value | undefined;
  }

  async getMany<Value>(keys: string[]): Promise<Array<Value | undefined>> {
    return Promise.all(keys.map((k) => this.get<Value>(k)));
  }

  async has(key: string): Promise<boolean> {
    return (await this.backend.get(key)) !== undefined;
  }

  async set(key: string, value: string, ttl?: number): Promise<void> {
    await this.backend.write([{ key, raw: value, ttlMs: ttl }]);
  }

  /** One atomic backend write: every entry committed when it resolves, none when it rejects. */
  async setMany(entries: KeyvEntry[]): Promise<void> {
    await this.backend.write(
      entries.map((e) => ({ key: e.key, raw: e.value as string, ttlMs: e.ttl })),
    );
  }

  async delete(key: string): Promise<boolean> {
    return this.backend.delete(key);
  }

  async deleteMany(keys: string[]): Promise<boolean> {
    return (await this.backend.deleteKeys(keys)) > 0;
  }

  async clear(): Promise<void> {
    const ns = this.namespace ? `${this.namespace}:` : "";
    await this.backend.deletePrefix(this.keyPrefix + ns);
  }

  async *iterator<Value>(
    namespace?: string,
  ): AsyncGenerator<Array<string | Awaited<Value> | undefined>, void> {
    const opts: ScanOptions = { reverse: false, limit: undefined };
    const prefix = this.keyPrefix + (namespace ? `${namespace}:` : "");
    for (const [key, raw] of await this.backend.scan(prefix, opts)) {
      yield [key, raw as Awaited<Value>];
    }
  }

  async disconnect(): Promise<void> {
    await this.backend.close();
  }
}

export interface Stored<T> {
  value: T;
  expires?: number;
}

/**
 * A value already serialised when its set was issued (see rawOf): a value that cannot be stored
 * fails its own caller at once, not the group write it would have joined, and is not turned into
 * JSON twice. keyv's serializer (below) passes it through.
 */
export class Serialized {
  constructor(readonly raw: string) {}
}

export class CorruptValue extends Error {}

/**
 * keyv's serializer and deserializer: plain JSON (`{"value":…,"expires":…}`), the layout this
 * store has always written, rather than keyv's default (@keyv/serialize), which rewrites strings
 * starting with ":" and would misread values already stored.
 */
export function serialize(data: { value?: unknown; expires?: number | undefined }): string {
  return data.value instanceof Serialized ? data.value.raw : JSON.stringify(data);
}

/**
 * An expired entry reads as absent here, so keyv never sees it expired: keyv deletes an entry it
 * finds expired, and a claim may have taken the key over between that read and that delete (a
 * lease or a "do this once" lost). Expired entries are purged by the sweeper (SQL, memory) or by
 * Redis itself.
 */
export function deserialize<T>(raw: string): Stored<T> | undefined {
  let data: Stored<T>;
  try {
    data = JSON.parse(raw) as Stored<T>;
  } catch (err) {
    throw new CorruptValue("stored value is not JSON", { cause: err });
  }
  const exp = data?.expires;
  if (typeof exp === "number" && Date.now() > exp) return undefined;
  return data;
}

/** The store's keyv: over this adapter, with the serializer above, told to throw. */
export function createKeyv(backend: Backend, keyPrefix: string): Keyv {
  const keyv = new Keyv({
    store: new OnAirKeyvAdapter(backend, keyPrefix),
    useKeyPrefix: false,
    serialize: serialize as never,
    deserialize: deserialize as never,
    // By default keyv answers a failed read with undefined, as if the key were absent.
    throwOnErrors: true,
  });
  // Keys arrive with the store's namespace already in front (`ns:install:T1`), the layout every
  // version has written; keyv adds none of its own (its default would be `keyv:`).
  keyv.namespace = undefined;
  return keyv;
}
