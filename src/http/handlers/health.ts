import type { Logger } from "../../log.ts";
import { sendJson } from "../body.ts";
import { ROUTES } from "../routes.ts";
import type { Handler } from "../server.ts";

/** How long `/readyz` waits for the store before it answers 503. */
export const READY_TIMEOUT_MS = 2_000;

/** `/healthz`: the process answers. `/readyz`: the store answers too, within a bound. */
export function createHealthHandler(deps: { logger: Logger; ready: () => Promise<void> }): Handler {
  return async (_req, res, url) => {
    if (url.pathname === ROUTES.healthz) {
      sendJson(res, 200, { ok: true });
      return true;
    }
    if (url.pathname !== ROUTES.readyz) return false;
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
