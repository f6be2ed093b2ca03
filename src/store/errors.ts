import { scrub } from "../log.ts";

export const STORE_ERROR_CODES = {
  /** The backend refused or could not be reached: connection, I/O, SQL error. */
  unavailable: "store_unavailable",
  /**
   * The backend did not answer within the store's bound (a frozen or overloaded server, a lock
   * held too long). The operation may still take effect later; a write is reported failed.
   */
  timeout: "store_timeout",
  /** The store was closed and used afterwards. */
  closed: "store_closed",
  /** A stored value could not be read back: bad JSON, schema mismatch, decryption failure. */
  corrupt: "store_corrupt",
  /** A value given to the store does not fit its schema, or a key is malformed. */
  invalid: "store_invalid",
  /** STORE_URL cannot be used. */
  badUrl: "store_bad_url",
} as const;
export type StoreErrorCode = (typeof STORE_ERROR_CODES)[keyof typeof STORE_ERROR_CODES];

export type StoreOp =
  | "open"
  | "get"
  | "set"
  | "delete"
  | "list"
  | "claim"
  | "ping"
  | "close"
  | "sweep"
  | "validate";

/**
 * Every store failure surfaces as one of these, never as "not found". The message names the
 * backend, the operation and the key (keys hold ids, never secrets); the driver's error is the
 * cause. Driver messages are scrubbed in case a driver echoes a connection string.
 */
export class StoreError extends Error {
  override readonly name = "StoreError";
  constructor(
    readonly code: StoreErrorCode,
    readonly op: StoreOp,
    readonly backend: string,
    readonly key: string | undefined,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(
      `store ${op} failed (${backend}${key === undefined ? "" : `, key "${key}"`}): ${scrub(detail)}`,
      options,
    );
  }
}

export function causeText(err: unknown): string {
  if (err instanceof Error) {
    // AggregateError (e.g. pg/net trying IPv4 and IPv6) carries the useful part inside.
    const inner =
      err instanceof AggregateError && err.errors.length > 0
        ? (err.errors as unknown[]).map((e) => (e instanceof Error ? e.message : String(e)))
        : [];
    const text = err.message || inner.join("; ") || err.name;
    const code = (err as NodeJS.ErrnoException).code;
    return code && !text.includes(code) ? `${text} (${code})` : text;
  }
  return String(err);
}

/**
 * The store itself failed (unreachable, too slow, closed), as against one stored value that
 * cannot be read: every other call would fail the same way now.
 */
export function isStoreDown(err: unknown): boolean {
  return (
    err instanceof StoreError &&
    (err.code === STORE_ERROR_CODES.unavailable ||
      err.code === STORE_ERROR_CODES.timeout ||
      err.code === STORE_ERROR_CODES.closed)
  );
}

/** One stored value that cannot be read (not a value, fails its schema, no key opens it). */
export function isCorrupt(err: unknown): err is StoreError {
  return err instanceof StoreError && err.code === STORE_ERROR_CODES.corrupt;
}

/** A stored secret that no configured key opens (sealed with another ONAIR_ENCRYPTION_KEY). */
export function isUnopenable(err: unknown): boolean {
  return (
    err instanceof StoreError &&
    err.code === STORE_ERROR_CODES.corrupt &&
    (err.cause as { code?: string } | undefined)?.code === "decrypt_failed"
  );
}
