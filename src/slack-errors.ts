import {
  ErrorCode,
  type WebAPIPlatformError,
  type WebAPIRateLimitedError,
  type WebAPIRequestError,
} from "@slack/web-api";

/**
 * Slack's failures recognised by the codes @slack/web-api gives its error types, never by their
 * message text: a 429 (`WebAPIRateLimitedError`, with Retry-After), a refusal Slack answered
 * with `ok: false` (`WebAPIPlatformError`, its error name in `data.error`), and a request that
 * got no answer (`WebAPIRequestError`).
 */

/**
 * How long a bulk Slack call (the live engine's posts) may take before it counts as a lost answer
 * (a `WebAPIRequestError`: the post's in-flight mark stays, and it is looked for before posting
 * again). @slack/web-api waits forever by default, and a call that never answered would hold its
 * channel's lane, and that of a run replacing it (live/lane.ts `after`), for good.
 */
export const SLACK_CALL_TIMEOUT_MS = 30_000;

function codeOf(err: unknown): unknown {
  return err && typeof err === "object" ? (err as { code?: unknown }).code : undefined;
}

export function isRateLimited(err: unknown): err is WebAPIRateLimitedError {
  return codeOf(err) === ErrorCode.RateLimitedError;
}

export function isPlatformError(err: unknown): err is WebAPIPlatformError {
  return codeOf(err) === ErrorCode.PlatformError;
}

export function isRequestError(err: unknown): err is WebAPIRequestError {
  return codeOf(err) === ErrorCode.RequestError;
}

/** Slack's error name for a refusal (`channel_not_found`, `not_in_channel`, …), else undefined. */
export function slackErrorName(err: unknown): string | undefined {
  return isPlatformError(err) ? err.data.error : undefined;
}

/**
 * Refusals that pass (HTTP 200, `ok: false`): Slack's limits answered as an error rather than a
 * 429 (`rate_limited`, `message_limit_exceeded`, `ratelimited`) and trouble on Slack's side
 * (`internal_error`, `fatal_error`, `request_timeout`, `service_unavailable`, and
 * `team_added_to_org` while a workspace moves into an Enterprise organisation). Trying again later is
 * right; giving up on the channel is not.
 */
const PASSING = new Set([
  "rate_limited",
  "ratelimited",
  "message_limit_exceeded",
  "internal_error",
  "fatal_error",
  "request_timeout",
  "service_unavailable",
  "team_added_to_org",
  // A rotating token that expired before its refresh landed (the refresh runs ahead of
  // expiry; a late one is a moment's trouble): the next try gets the refreshed token.
  "token_expired",
]);

/**
 * Of those, the ones after which the call may still have taken effect. Slack's common-errors
 * table says of `internal_error` and `fatal_error`: "It's possible some aspect of the operation
 * succeeded before the error was raised"; `service_unavailable` does not say how far the call
 * got. (`request_timeout` is a POST body that arrived missing or truncated: nothing was done.)
 */
const UNSURE = new Set(["internal_error", "fatal_error", "service_unavailable"]);

/** A refusal to try again later (see PASSING), never a reason to stop posting somewhere. */
export function isPassingRefusal(err: unknown): boolean {
  return isPlatformError(err) && PASSING.has(err.data.error);
}

/**
 * Slack answered, so the call surely did not take effect: a refusal or a 429, but not an answer
 * that Slack itself could not tell (UNSURE), which counts as a lost answer.
 */
export function isRefusal(err: unknown): boolean {
  return (isPlatformError(err) && !UNSURE.has(err.data.error)) || isRateLimited(err);
}

/** Retry-After of a 429 in ms (at least a second); undefined for anything else. */
export function retryAfterMs(err: unknown): number | undefined {
  if (!isRateLimited(err)) return undefined;
  return Math.max(1, Number(err.retryAfter) || 1) * 1000;
}

/** The workspace has no installation (uninstalled, tokens revoked): nothing can be posted there. */
export class NoInstallationError extends Error {
  constructor(readonly teamId: string) {
    super(`no Slack installation for team ${teamId}`);
  }
}
