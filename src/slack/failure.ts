import type { App } from "@slack/bolt";
import type { Deps } from "../deps.ts";
import { isUserMistake, plainMessage } from "../domain/errors.ts";
import { UpstreamError } from "../upstream/errors.ts";

/**
 * An upstream service down, overloaded or out of reach (5xx, 429, a timeout, no connection): its
 * condition, not the app's fault, so a warning with what was asked and what came back, no stack.
 */
export function upstreamCondition(err: unknown): object | undefined {
  if (!(err instanceof UpstreamError) || err.name === "UpstreamSchemaError") return undefined;
  const { status } = err;
  if (status !== undefined && status < 500 && status !== 429) return undefined;
  return {
    service: err.service,
    status,
    code: err.code,
    attempts: err.attempts,
    reason: err.message,
  };
}

/**
 * The one way a listener handles a failure: a user's mistake or a refusal is logged at info
 * without a stack; anything else is the app's own fault and is logged at error with its stack.
 * Either way the user reads one plain sentence and a next step.
 */
export async function reportFailure(
  deps: Deps,
  what: string,
  err: unknown,
  tell: (text: string) => Promise<unknown>,
): Promise<void> {
  if (isUserMistake(err)) {
    deps.logger.info(
      { what, refusal: (err as { code?: string }).code, reason: (err as Error).message },
      "refused",
    );
  } else if (upstreamCondition(err)) {
    deps.logger.warn({ what, upstream: upstreamCondition(err) }, "upstream service unavailable");
  } else {
    deps.logger.error({ err, what }, "listener failed");
  }
  try {
    await tell(plainMessage(err));
  } catch (e) {
    deps.logger.warn({ err: e, what }, "could not tell the user");
  }
}

/** The last sink: whatever a listener let through is logged, and the app keeps serving. */
export function registerErrorSink(app: App, deps: Deps): void {
  app.error(async (err) => {
    deps.logger.error({ err }, "unhandled listener error");
  });
}
