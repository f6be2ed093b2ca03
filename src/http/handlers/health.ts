import type { Logger } from "../../log.ts";
import { sendJson } from "../body.ts";
import { ROUTES } from "../routes.ts";
import type { Handler } from "../server.ts";

/** How long `/readyz` waits for the store before it answers 503. */
export const READY_TIMEOUT_MS = 2_000;

/**
 * `/healthz`: the process answers. `/readyz`: every part is up (not starting, not stopping) and
 * the store answers, within a bound.
 */
export function createHealthHandler(deps: {
  logger: Logger;
  ready: () => Promise<void>;
  /** Why the app takes no work now, or undefined: see Readiness. */
  refusal?: () => string | undefined;
}): Handler {
  return async (_req, res, url) => {
    if (url.pathname === ROUTES.healthz) {
      sendJson(res, 200, { ok: true });
      return true;
    }
    if (url.pathname !== ROUTES.readyz) return false;
    // Starting and stopping are expected states, not failures: answered, not logged.
    const refusal = deps.refusal?.();
    if (refusal) {
      sendJson(res, 503, { ok: false, error: refusal }, { "retry-after": "1" });
      return true;
    }
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        deps.ready(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`no answer within ${READY_TIMEOUT_MS} ms`)),
            READY_TIMEOUT_MS,
          );
        }),
      ]);
      sendJson(res, 200, { ok: true });
    } catch (err) {
      deps.logger.warn({ err }, "readiness check failed");
      sendJson(res, 503, { ok: false, error: "the store does not answer" });
    } finally {
      clearTimeout(timer);
    }
    return true;
  };
}
