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

/** Slack answered, so the call surely did not take effect: a refusal or a 429. */
export function isRefusal(err: unknown): boolean {
  return isPlatformError(err) || isRateLimited(err);
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
