import { RelayError } from "../upstream/errors.ts";

/**
 * Refusals a user reads: each is one plain sentence and a next step (`userMessage`), kept apart
 * from the log's words. Domain actions throw these; listeners show them; anything else is the
 * app's own fault and reaches the error sink with its stack.
 */

export const USER_ERROR_CODES = {
  notConfigured: "not_configured",
  notLinked: "not_linked",
  notAllowed: "not_allowed",
  notFound: "not_found",
  invalid: "invalid",
  busy: "busy",
} as const;
export type UserErrorCode = (typeof USER_ERROR_CODES)[keyof typeof USER_ERROR_CODES];

export class UserFacingError extends Error {
  override readonly name = this.constructor.name;
  constructor(
    readonly code: UserErrorCode,
    readonly userMessage: string,
    options?: { cause?: unknown },
  ) {
    super(`${code}: ${userMessage}`, options);
  }
}

export const GENERIC_FAILURE =
  "Something went wrong on our side and nothing was changed. Please try again in a minute.";

/** The plain sentence for a user: an error's own userMessage when it has one, else a generic one. */
export function userMessageOf(err: unknown): string {
  if (
    err &&
    typeof err === "object" &&
    "userMessage" in err &&
    typeof err.userMessage === "string"
  ) {
    return err.userMessage;
  }
  return GENERIC_FAILURE;
}

/**
 * The words a user reads for an error. A relay catalog error also names itself: several catalog
 * rows share a meaning (e.g. three "listener out of date" errors), and the name is what the relay
 * admin looks up.
 */
export function plainMessage(err: unknown): string {
  if (err instanceof RelayError && err.known && err.errorName) {
    return `${err.userMessage} (Relay error: ${err.errorName}.)`;
  }
  return userMessageOf(err);
}

/** A user's own mistake or a refusal (logged at info, no stack), as opposed to the app's fault. */
export function isUserMistake(err: unknown): boolean {
  return err instanceof UserFacingError;
}
