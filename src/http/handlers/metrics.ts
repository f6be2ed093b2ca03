import { createHash, timingSafeEqual } from "node:crypto";
import type { Metrics } from "../../metrics.ts";
import { sendJson } from "../body.ts";
import { ROUTES } from "../routes.ts";
import type { Handler } from "../server.ts";

const digest = (s: string) => createHash("sha256").update(s).digest();

/**
 * `/metrics`: Prometheus text format. Meant for inside the deployment (the shipped proxy does
 * not route it); with METRICS_TOKEN set it also asks for `Authorization: Bearer <token>`,
 * compared in constant time (as digests, so not even the length shows).
 */
export function createMetricsHandler(metrics: Metrics, token?: string): Handler {
  const expected = token === undefined ? undefined : digest(token);
  return async (req, res, url) => {
    if (url.pathname !== ROUTES.metrics) return false;
    if (expected) {
      const m = /^Bearer (.+)$/.exec(req.headers.authorization ?? "");
      if (!m?.[1] || !timingSafeEqual(digest(m[1]), expected)) {
        sendJson(
          res,
          401,
          { error: "send the metrics token as Authorization: Bearer <METRICS_TOKEN>" },
          { "www-authenticate": 'Bearer realm="metrics"' },
        );
        req.resume();
        return true;
      }
    }
    const text = await metrics.registry.metrics();
    res.writeHead(200, { "content-type": metrics.registry.contentType });
    res.end(text);
    return true;
  };
}
