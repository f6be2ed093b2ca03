import type { z } from "zod";
import { type Cipher, DecryptError } from "./crypto.ts";
import { isCorrupt, STORE_ERROR_CODES, StoreError } from "./errors.ts";
import type { KeyValueStore, ListOptions } from "./kv.ts";

/**
 * Typed repositories over the key-value store. A feature adds one with `defineRepository` at
 * module level, without touching the store: the definition names the key prefix, the zod
 * schema, the fields to encrypt, and how a record belongs to a team, which is all
 * `deleteTeam` needs to remove it on uninstall.
 */

/**
 * How a repository's records belong to a team:
 * - "key": ids are `{team}` or `{team}:…` (keys `prefix:{team}` / `prefix:{team}:…`);
 * - { field }: the record's top-level `field` holds the team id (keys not by team, e.g. `sub:{id}`);
 * - "none": not team data; deleteTeam leaves it alone.
 */
export type TeamScope = "key" | { readonly field: string } | "none";

export interface RepositoryDefinition<S extends z.ZodType = z.ZodType> {
  /** Key prefix without the colon: records live at `{prefix}:{id}`. */
  readonly prefix: string;
  readonly schema: S;
  /**
   * Dot paths of fields stored encrypted (AES-256-GCM, bound to the record's key and the path).
   * Any JSON value can sit there; it is encrypted as its JSON text.
   */
  readonly encryptedFields: readonly string[];
  readonly team: TeamScope;
  /**
   * How long a record has left, for one written again without its caller (a value sealed with a
   * previous key, sealed again as it is read); undefined = no expiry.
   */
  readonly ttlOf?: ((value: z.output<S>) => number | undefined) | undefined;
}

const PREFIX = /^[a-z][a-z0-9_-]*$/;

/**
 * Declares a repository: its key prefix, schema, encrypted fields and how its records name their
 * team. Nothing is registered: the store is opened with the list of repositories it serves
 * (openStore's `repositories`, beside the core ones), and `deleteTeam` covers exactly those.
 */
export function defineRepository<S extends z.ZodType>(def: {
  prefix: string;
  schema: S;
  encryptedFields?: readonly string[];
  team: TeamScope;
  ttlOf?: (value: z.output<S>) => number | undefined;
}): RepositoryDefinition<S> {
  if (!PREFIX.test(def.prefix)) {
    throw new Error(`repository prefix "${def.prefix}" must match ${PREFIX}`);
  }
  const encryptedFields = def.encryptedFields ?? [];
  if (typeof def.team === "object" && encryptedFields.includes(def.team.field)) {
    throw new Error(`repository "${def.prefix}": the team field cannot be encrypted`);
  }
  const d: RepositoryDefinition<S> = Object.freeze({
    prefix: def.prefix,
    schema: def.schema,
    encryptedFields: Object.freeze([...encryptedFields]),
    team: def.team,
    ttlOf: def.ttlOf,
  });
  return d;
}

/** The repositories a store serves; two with one prefix are a programming error. */
export function repositoryList(
  defs: readonly RepositoryDefinition[],
): readonly RepositoryDefinition[] {
  const seen = new Set<string>();
  for (const d of defs) {
    if (seen.has(d.prefix)) throw new Error(`repository prefix "${d.prefix}" is listed twice`);
    seen.add(d.prefix);
  }
  return Object.freeze([...defs]);
}

export interface Repository<T> {
  readonly prefix: string;
  /** The store key of a record (without the store's namespace). */
  key(id: string): string;
  get(id: string): Promise<T | undefined>;
  /** Validates against the schema, encrypts the declared fields, writes. */
  put(id: string, value: T, ttlMs?: number): Promise<void>;
  delete(id: string): Promise<boolean>;
  /** Records whose id starts with `idPrefix`, in id byte order (or reversed). */
  list(idPrefix?: string, opts?: ListOptions): Promise<Array<{ id: string; value: T }>>;
  ids(idPrefix?: string): Promise<string[]>;
  /**
   * Reads the record and, if a previous key sealed it, seals it again with the current one (as
   * every read does); says which it was. A value no key opens throws as get does.
   */
  reseal(id: string): Promise<"resealed" | "current" | "gone">;
}

type Json = Record<string, unknown>;

function getPath(obj: unknown, path: readonly string[]): unknown {
  let cur = obj;
  for (const p of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Json)[p];
  }
  return cur;
}

/** A copy of `obj` with `path` set to `value`; objects along the path are copied, not mutated. */
function setPath(obj: unknown, path: readonly string[], value: unknown): unknown {
  const [head, ...rest] = path;
  if (head === undefined) return value;
  const base = obj !== null && typeof obj === "object" ? (obj as Json) : {};
  return { ...base, [head]: setPath(base[head], rest, value) };
}

function invalid(key: string, detail: string, cause?: unknown): StoreError {
  return new StoreError(STORE_ERROR_CODES.invalid, "set", "schema", key, detail, { cause });
}

function corrupt(key: string, detail: string, cause?: unknown): StoreError {
  return new StoreError(STORE_ERROR_CODES.corrupt, "get", "schema", key, detail, { cause });
}

/** zod's issue list without input values (they could be secrets). */
function issues(err: z.ZodError): string {
  return err.issues
    .slice(0, 5)
    .map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`)
    .join("; ");
}

export function bindRepository<S extends z.ZodType>(
  kv: KeyValueStore,
  cipher: Cipher,
  def: RepositoryDefinition<S>,
): Repository<z.output<S>> {
  type T = z.output<S>;
  const paths = def.encryptedFields.map((f) => ({ name: f, parts: f.split(".") }));
  const keyOf = (id: string) => {
    if (typeof id !== "string" || id === "") throw invalid(`${def.prefix}:`, "empty id");
    return `${def.prefix}:${id}`;
  };

  function encode(key: string, value: T): unknown {
    const parsed = def.schema.safeParse(value);
    if (!parsed.success) throw invalid(key, issues(parsed.error));
    let out: unknown = parsed.data;
    for (const p of paths) {
      const v = getPath(out, p.parts);
      if (v === undefined) continue;
      out = setPath(out, p.parts, cipher.encrypt(JSON.stringify(v), `${key}#${p.name}`));
    }
    return out;
  }

  function decode(key: string, raw: unknown): { value: T; stale: boolean } {
    let out = raw;
    let stale = false;
    for (const p of paths) {
      const v = getPath(out, p.parts);
      if (v === undefined) continue;
      if (typeof v !== "string") throw corrupt(key, `field ${p.name} is not encrypted`);
      let plain: string;
      try {
        const opened = cipher.open(v, `${key}#${p.name}`);
        plain = opened.plain;
        stale ||= opened.stale;
      } catch (err) {
        if (err instanceof DecryptError) throw corrupt(key, err.message, err);
        throw err;
      }
      out = setPath(out, p.parts, JSON.parse(plain));
    }
    const parsed = def.schema.safeParse(out);
    if (!parsed.success) throw corrupt(key, `does not match its schema: ${issues(parsed.error)}`);
    return { value: parsed.data, stale };
  }

  /**
   * Seals a record read under a previous key again with the current one, in one compare-and-set:
   * a record changed since it was read is left to its writer (whose value is sealed with the
   * current key, or is sealed again when next read).
   */
  async function sealAgain(key: string): Promise<void> {
    await kv.update<unknown>(key, (stored) => {
      const { value, stale } = decode(key, stored);
      if (!stale) return undefined;
      const ttlMs = def.ttlOf?.(value);
      if (ttlMs !== undefined && ttlMs <= 0) return undefined;
      return { value: encode(key, value), ttlMs };
    });
  }

  async function read(key: string, raw: unknown): Promise<T> {
    const { value, stale } = decode(key, raw);
    if (stale) await sealAgain(key);
    return value;
  }

  const prefix = `${def.prefix}:`;
  return {
    prefix: def.prefix,
    key: keyOf,
    async get(id) {
      const key = keyOf(id);
      const raw = await kv.get<unknown>(key);
      return raw === undefined ? undefined : read(key, raw);
    },
    put(id, value, ttlMs) {
      // Not async: on the webhook path (thousands a second) it only hands kv.set's promise on;
      // a bad id or value still rejects, as from an async function.
      let key: string;
      let encoded: unknown;
      try {
        key = keyOf(id);
        encoded = encode(key, value);
      } catch (err) {
        return Promise.reject(err);
      }
      return kv.set(key, encoded, ttlMs);
    },
    async delete(id) {
      return kv.delete(keyOf(id));
    },
    async list(idPrefix = "", opts = {}) {
      const { unreadable } = opts;
      const rows = await kv.entries<unknown>(prefix + idPrefix, {
        ...opts,
        after: opts.after === undefined ? undefined : prefix + opts.after,
        unreadable: unreadable && ((key, err) => unreadable(key.slice(prefix.length), err)),
      });
      const out: Array<{ id: string; value: T }> = [];
      for (const [key, raw] of rows) {
        const id = key.slice(prefix.length);
        let value: T;
        try {
          value = paths.length === 0 ? decode(key, raw).value : await read(key, raw);
        } catch (err) {
          if (!unreadable || !isCorrupt(err)) throw err;
          unreadable(id, err);
          continue;
        }
        out.push({ id, value });
      }
      return out;
    },
    async reseal(id) {
      const key = keyOf(id);
      const raw = await kv.get<unknown>(key);
      if (raw === undefined) return "gone";
      const { stale } = decode(key, raw);
      if (!stale) return "current";
      await sealAgain(key);
      return "resealed";
    },
    async ids(idPrefix = "") {
      return (await kv.keys(prefix + idPrefix)).map((k) => k.slice(prefix.length));
    },
  };
}

export function assertTeamId(teamId: string): void {
  if (typeof teamId !== "string" || teamId === "" || teamId.includes(":")) {
    throw new StoreError(
      STORE_ERROR_CODES.invalid,
      "delete",
      "schema",
      undefined,
      "a team id is non-empty and has no colon",
    );
  }
}

/**
 * Removes every record of `teamId` in each of `defs`. Returns how many keys went.
 * Records that name their team in a field are found by reading the prefix, without decrypting.
 */
export async function deleteTeamData(
  kv: KeyValueStore,
  teamId: string,
  defs: readonly RepositoryDefinition[],
): Promise<number> {
  assertTeamId(teamId);
  let n = 0;
  for (const def of defs) {
    const scope = def.team;
    if (scope === "none") continue;
    if (scope === "key") {
      n += await kv.deletePrefix(`${def.prefix}:${teamId}:`);
      if (await kv.delete(`${def.prefix}:${teamId}`)) n++;
      continue;
    }
    const rows = await kv.entries<unknown>(`${def.prefix}:`);
    const doomed = rows
      .filter(([, v]) => v !== null && typeof v === "object" && (v as Json)[scope.field] === teamId)
      .map(([k]) => k);
    n += await kv.deleteMany(doomed);
  }
  return n;
}
