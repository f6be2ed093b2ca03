import { resolve } from "node:path";
import { type Config, ConfigError } from "./config.ts";

/**
 * Start-up failures an operator fixes in the environment, told as one line that names the
 * variable (or path) and what to do, instead of the library's words ("invalid_auth", "fetch
 * failed", "SQLITE_CANTOPEN"). Anything else is returned as it came: a fault of the app's own.
 */

/** Slack's answers to auth.test for a token that is not (or no longer) good. */
const BAD_TOKEN = new Set([
  "invalid_auth",
  "not_authed",
  "account_inactive",
  "token_revoked",
  "token_expired",
  "no_permission",
]);

interface WebApiError {
  code?: string;
  data?: { error?: string };
  original?: { code?: string; cause?: { code?: string; message?: string }; message?: string };
}

/** A failure of Bolt's start (auth.test with the bot token) → what to fix. */
export function slackStartError(err: unknown, config: Config): unknown {
  const e = err as WebApiError;
  if (e?.code === "slack_webapi_platform_error" && BAD_TOKEN.has(e.data?.error ?? "")) {
    return new ConfigError(
      "SLACK_BOT_TOKEN",
      `was refused by Slack (${e.data?.error}): copy the Bot User OAuth Token (xoxb-…) from your app's OAuth & Permissions page, or reinstall the app to the workspace`,
    );
  }
  if (e?.code === "slack_webapi_request_error" || e?.code === "slack_webapi_http_error") {
    const why =
      e.original?.cause?.code ?? e.original?.code ?? e.original?.cause?.message ?? "no answer";
    const reach = `(${why}): check this host's network (DNS, firewall, outbound proxy)`;
    return new ConfigError(
      "SLACK_API_URL",
      config.slack.apiUrl
        ? `is ${config.slack.apiUrl}, which could not be reached ${reach} and the address`
        : `is unset, and Slack's API at https://slack.com/api/ could not be reached ${reach}`,
    );
  }
  return err;
}

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
