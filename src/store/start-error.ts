import { resolve } from "node:path";
import { type Config, ConfigError } from "../config.ts";

/**
 * A store that would not open at start-up, told as one line an operator fixes in the
 * environment (STORE_URL and the path it names) instead of the driver's words
 * ("SQLITE_CANTOPEN"). Anything else is returned as it came: a fault of the app's own. Its
 * counterpart for Slack's start is slack/start-error.ts.
 */

/** A failure to open the store → what to fix, for a SQLite file the process cannot write. */
export function storeStartError(err: unknown, config: Config): unknown {
  // The store wraps the driver's error (StoreError's cause): its code is what names the trouble.
  const outer = err as { code?: string; message?: string; cause?: unknown };
  const inner = (outer?.cause ?? outer) as { code?: string; message?: string };
  const e = { code: inner?.code, message: `${inner?.message} ${outer?.message}` };
  const code = e.code ?? "";
  const cannotOpen =
    code === "SQLITE_CANTOPEN" ||
    /SQLITE_CANTOPEN/.test(String(e?.message)) ||
    ["EACCES", "EPERM", "EROFS", "ENOTDIR", "EEXIST", "EISDIR"].includes(code);
  if (config.store.kind === "sqlite" && cannotOpen) {
    const path = resolve(config.store.url.slice("sqlite://".length));
    return new ConfigError(
      "STORE_URL",
      `names ${path}, which this process cannot create or open (${/^[A-Z_]+$/.test(code) ? code : "SQLITE_CANTOPEN"}): make its directory exist and writable by the user the app runs as (in the container: the volume on /app/data), or point STORE_URL elsewhere`,
    );
  }
  return err;
}
