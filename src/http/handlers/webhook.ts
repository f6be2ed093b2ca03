import type { IncomingMessage, ServerResponse } from "node:http";
import { WEBHOOK_SECRET_HEADER } from "../../domain/subscription.ts";
import type { Ingest } from "../../live/ingest.ts";
import { WEBHOOK_BODY_LIMIT } from "../../live/ingest.ts";
import type { Metrics } from "../../metrics.ts";
import { readCapped, refuse, sendJson } from "../body.ts";
import { STARTING } from "../readiness.ts";
import { ROUTES } from "../routes.ts";
import type { Handler } from "../server.ts";

/**
 * `POST|PUT /webhooks/events/:subscriptionId`, the hot path: HTTP only. The live engine's ingest
 * decides (subscription, secret, type, size before the body is read; JSON and schema after) and
 * stores; this maps its answer to a status. 204 only once the message is stored.
 */
export interface WebhookRoute {
  /** The route in the server's chain (any request target). */
  handler: Handler;
  /**
   * The hot path: a target that is the prefix and an id of id characters only, taken before the
   * server parses the URL (see PLAIN_WEBHOOK_TARGET). Same checks, same answers.
   */
  direct(req: IncomingMessage, res: ServerResponse, subscriptionId: string): Promise<void>;
}

/**
 * A webhook request target the route takes without URL parsing: the prefix, then only id
 * characters (no dot segment, escape, slash or backslash the parser would rewrite), then
 * nothing or a query. The parser would give this very path; anything else takes the general
 * path, with the same checks and the same answers.
 */
export const PLAIN_WEBHOOK_TARGET = /^\/webhooks\/events\/([A-Za-z0-9_-]+)(?:[?#]|$)/;

export function createWebhookRoute(deps: {
  metrics: Metrics;
  /** Undefined while the app is still starting. */
  ingest: () => Ingest | undefined;
  /** Why no message is taken now (starting or stopping), or undefined: see Readiness. */
  refusal?: () => string | undefined;
}): WebhookRoute {
  // Counters by outcome, resolved once instead of hashed per message (thousands a second).
  const counters = new Map<string, { inc(): void }>();
  const count = (outcome: string) => {
    let c = counters.get(outcome);
    if (!c) {
      c = deps.metrics.webhookMessages.labels({ outcome });
      counters.set(outcome, c);
    }
    c.inc();
  };
  const limit = { limit: WEBHOOK_BODY_LIMIT };
  const direct = async (req: IncomingMessage, res: ServerResponse, id: string) => {
    const method = req.method ?? "";
    if (method !== "POST" && method !== "PUT") {
      count("method");
      refuse(req, res, 405, "use POST or PUT", { ...limit, headers: { allow: "POST, PUT" } });
      return;
    }
    const ingest = deps.ingest();
    const refusal = deps.refusal?.() ?? (ingest ? undefined : STARTING);
    if (!ingest || refusal) {
      refuse(req, res, 503, refusal ?? STARTING, {
        ...limit,
        headers: { "retry-after": "1" },
      });
      return;
    }
    const secret = req.headers[WEBHOOK_SECRET_HEADER];
    const asked = ingest.admit(id, {
      secret: typeof secret === "string" ? secret : undefined,
      contentType: req.headers["content-type"],
      declaredLength: Number(req.headers["content-length"]),
    });
    // Most messages are admitted at once (see Ingest.admit): no turn of the queue for those.
    const admitted = asked instanceof Promise ? await asked : asked;
    if (!admitted.ok) {
      count(admitted.outcome);
      refuse(req, res, admitted.status, admitted.error, {
        ...limit,
        ...(admitted.retryAfter ? { headers: { "retry-after": String(admitted.retryAfter) } } : {}),
      });
      return;
    }
    const body = await readCapped(req, WEBHOOK_BODY_LIMIT);
    if (body === "too_large") {
      count("too_large");
      refuse(req, res, 413, `body over ${WEBHOOK_BODY_LIMIT} bytes`, limit);
      return;
    }
    const done = await ingest.accept(admitted, body);
    if (!done.ok) {
      count(done.outcome);
      sendJson(
        res,
        done.status,
        { error: done.error },
        done.retryAfter ? { "retry-after": String(done.retryAfter) } : {},
      );
      return;
    }
    count("accepted");
    res.writeHead(204).end();
  };
  const handler: Handler = async (req, res, url) => {
    const path = url.pathname;
    if (!path.startsWith(ROUTES.webhook)) return false;
    const id = path.slice(ROUTES.webhook.length);
    if (id === "" || id.includes("/")) {
      refuse(req, res, 404, "unknown subscription", limit);
      return true;
    }
    await direct(req, res, id);
    return true;
  };
  return { handler, direct };
}
