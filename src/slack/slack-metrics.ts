import type { Metrics } from "../metrics.ts";

/**
 * A fetch for Bolt's interactive Web API client that counts each call by method and outcome
 * (`onair_slack_calls_total{method="views.open",outcome="ok"}`). Outcomes are read from the HTTP
 * status only: the body belongs to the client. Bulk posting counts its own calls.
 */
export function countingFetch(metrics: Metrics, base: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const path = url.split("?")[0] ?? "";
    const method = path.slice(path.lastIndexOf("/") + 1) || "unknown";
    try {
      const res = await base(input, init);
      const outcome =
        res.status === 200 ? "ok" : res.status === 429 ? "ratelimited" : `http_${res.status}`;
      metrics.slackCalls.inc({ method, outcome });
      return res;
    } catch (err) {
      metrics.slackCalls.inc({ method, outcome: "network_error" });
      throw err;
    }
  };
}
