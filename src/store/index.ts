import { isAbsolute, resolve } from "node:path";
import type { Logger } from "../log.ts";
import { postgresLabel, redisLabel } from "./backends/labels.ts";
import type { Backend } from "./backends/types.ts";
import type { Cipher } from "./crypto.ts";
import { causeText, STORE_ERROR_CODES, StoreError } from "./errors.ts";
import { createKeyValueStore, STORE_BULK_TIMEOUT_MS, STORE_OP_TIMEOUT_MS } from "./kv.ts";
import { CORE_REPOSITORIES } from "./records.ts";
import { createRepositories } from "./repositories.ts";
import {
  bindRepository,
  deleteTeamData,
  type RepositoryDefinition,
  repositoryList,
} from "./repository.ts";
import type { Store } from "./store.ts";

export type { BackendKind } from "./backends/types.ts";
export type { Cipher } from "./crypto.ts";
export { createCipher, DecryptError, isEncrypted, KEY_FILE, loadOrCreateKey } from "./crypto.ts";
export {
  isStoreDown,
  isUnopenable,
  STORE_ERROR_CODES,
  StoreError,
  type StoreErrorCode,
} from "./errors.ts";
export { CANARY_KEY, checkEncryptionKey, EncryptionKeyError } from "./key-check.ts";
export { timeOrderedId } from "./keys.ts";
export {
  type KeyValueStore,
  type ListOptions,
  STORE_BULK_TIMEOUT_MS,
  STORE_OP_TIMEOUT_MS,
} from "./kv.ts";
export type { Outbox, OutboxRow, OutboxWorkMark } from "./outbox.ts";
export * from "./records.ts";
export type { Repositories } from "./repositories.ts";
export {
  defineRepository,
  type Repository,
  type RepositoryDefinition,
  repositoryList,
  type TeamScope,
} from "./repository.ts";
export type { Store } from "./store.ts";

export interface OpenStoreOptions {
  cipher: Cipher;
  /**
   * The features' own repositories (beside the core ones of records.ts), listed by the
   * composition root: `deleteTeam` covers exactly the core ones and these.
   */
  repositories?: readonly RepositoryDefinition[];
  logger?: Logger;
  /** Prefix for every key (`{namespace}:…`); tests use one per file so files never collide. */
  namespace?: string;
  /** The first connection (and Postgres's schema check). Default 5 s. */
  connectTimeoutMs?: number;
  /** The bound of each operation; default STORE_OP_TIMEOUT_MS (2 s). */
  opTimeoutMs?: number;
  /**
   * How often expired entries are purged (SQL and memory: rows; Redis: index entries of keys
   * it expired). Default 10 min; 0 = never.
   */
  sweepIntervalMs?: number;
  /**
   * SQLite: "here" (the default), this connection checkpoints the write-ahead log as it grows;
   * "elsewhere", another connection to the same file that commits often does (the live
   * engine's thread), and this one only past a backstop of SQLITE_CHECKPOINT_BACKSTOP pages,
   * should that one stop. The webhook route's store is opened so: a checkpoint syncs the files
   * (~10 ms on this machine) in the commit that runs it, and every acknowledgement waiting on
   * that commit would wait for it too.
   */
  sqliteCheckpoints?: "here" | "elsewhere";
}

/** Pages (4 KiB) of write-ahead log a store opened with `sqliteCheckpoints: "elsewhere"` allows. */
export const SQLITE_CHECKPOINT_BACKSTOP = 10_000;

const NAMESPACE = /^[A-Za-z0-9_.-]+$/;

function labelOf(url: string): string {
  const scheme = url.split(":", 1)[0]?.toLowerCase() ?? "";
  if (scheme === "redis" || scheme === "rediss") return redisLabel(url);
  if (scheme === "postgres" || scheme === "postgresql") return postgresLabel(url);
  return scheme || "store";
}

async function openBackend(url: string, opts: OpenStoreOptions): Promise<Backend> {
  const scheme = url.split(":", 1)[0]?.toLowerCase();
  const bo = {
    logger: opts.logger,
    connectTimeoutMs: opts.connectTimeoutMs ?? 5_000,
    opTimeoutMs: opts.opTimeoutMs ?? STORE_OP_TIMEOUT_MS,
    bulkTimeoutMs: STORE_BULK_TIMEOUT_MS,
    keyPrefix: opts.namespace ? `${opts.namespace}:` : "",
    checkpointPages:
      opts.sqliteCheckpoints === "elsewhere" ? SQLITE_CHECKPOINT_BACKSTOP : undefined,
  };
  switch (scheme) {
    case "sqlite": {
      const path = url.slice("sqlite://".length);
      if (!url.startsWith("sqlite://") || path === "" || path.startsWith(":memory:")) {
        throw new StoreError(
          STORE_ERROR_CODES.badUrl,
          "open",
          "sqlite",
          undefined,
          "STORE_URL must name a file, as sqlite://PATH (an in-memory SQLite would lose data on restart)",
        );
      }
      const { openSqlite } = await import("./backends/sqlite.ts");
      return openSqlite(isAbsolute(path) ? path : resolve(path), bo);
    }
    case "redis":
    case "rediss": {
      const { openRedis } = await import("./backends/redis.ts");
      return openRedis(url, bo);
    }
    case "postgres":
    case "postgresql": {
      const { openPostgres } = await import("./backends/postgres.ts");
      return openPostgres(url, bo);
    }
    case "memory": {
      const { openMemory } = await import("./backends/memory.ts");
      return openMemory(url.replace(/^memory:(\/\/)?/i, ""));
    }
    default:
      throw new StoreError(
        STORE_ERROR_CODES.badUrl,
        "open",
        "store",
        undefined,
        "STORE_URL must start with sqlite://, redis://, rediss://, postgresql:// or memory://",
      );
  }
}

/**
 * Opens the store named by STORE_URL and checks that it answers; any failure is a StoreError
 * naming the backend (never its password) and the cause.
 */
export async function openStore(url: string, opts: OpenStoreOptions): Promise<Store> {
  if (opts.namespace !== undefined && !NAMESPACE.test(opts.namespace)) {
    throw new StoreError(
      STORE_ERROR_CODES.invalid,
      "open",
      "store",
      undefined,
      `namespace must match ${NAMESPACE}`,
    );
  }
  let backend: Backend;
  try {
    backend = await openBackend(url, opts);
  } catch (err) {
    if (err instanceof StoreError) throw err;
    throw new StoreError(
      STORE_ERROR_CODES.unavailable,
      "open",
      labelOf(url),
      undefined,
      causeText(err),
      {
        cause: err,
      },
    );
  }
  const kv = createKeyValueStore(
    backend,
    opts.namespace,
    opts.opTimeoutMs === undefined ? {} : { opTimeoutMs: opts.opTimeoutMs },
  );
  try {
    await kv.ping();
  } catch (err) {
    await backend.close().catch(() => {});
    throw err;
  }

  let sweeper: NodeJS.Timeout | undefined;
  const every = opts.sweepIntervalMs ?? 10 * 60_000;
  if (every > 0) {
    sweeper = setInterval(() => {
      kv.sweepExpired().catch((err: unknown) =>
        opts.logger?.warn({ err }, "store: purging expired entries failed"),
      );
    }, every);
    // Housekeeping must not keep the process alive.
    sweeper.unref();
  }

  const repos = createRepositories(kv, opts.cipher);
  const served = repositoryList([...CORE_REPOSITORIES, ...(opts.repositories ?? [])]);
  return {
    ...kv,
    ...repos,
    repository: (def) => bindRepository(kv, opts.cipher, def),
    deleteTeam: (teamId) => deleteTeamData(kv, teamId, served),
    async close() {
      if (sweeper) clearInterval(sweeper);
      await kv.close();
    },
  };
}
