import { type Config, ConfigError } from "../config.ts";

/**
 * Bolt's start (auth.test with the bot token) failing for a reason an operator fixes in the
 * environment, told as one line that names the variable and what to do, instead of the
 * library's words ("invalid_auth", "fetch failed"). Anything else is returned as it came: a
 * fault of the app's own. Its counterpart for the store is store/start-error.ts.
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
