import type { Metrics } from "../../metrics.ts";
import { ROUTES } from "../routes.ts";
import type { Handler } from "../server.ts";

/** `/metrics`: Prometheus text format. */
export function createMetricsHandler(metrics: Metrics): Handler {
  return async (_req, res, url) => {
    if (url.pathname !== ROUTES.metrics) return false;
    const text = await metrics.registry.metrics();
    res.writeHead(200, { "content-type": metrics.registry.contentType });
    res.end(text);
    return true;
  };
}
