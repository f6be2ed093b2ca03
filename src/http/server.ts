import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Logger } from "../log.ts";
import type { Metrics } from "../metrics.ts";
import { sendJson } from "./body.ts";
import { routeLabel } from "./routes.ts";

/**
 * A route handler: answers the request and returns true, or returns false when the request is
 * not its own. The server tries its handlers in turn (probot's shape); a route is findable by
 * its handler's file name.
 */
export type Handler = (
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
) => boolean | Promise<boolean>;

/**
 * The status counted for a request its sender abandoned before it was read (nginx's "client
 * closed request"): a sender that hangs up mid-body is its own doing, so it is kept apart from
 * the server's 5xx, which page someone.
 */
export const CLIENT_CLOSED = 499;

/** The request's connection closed under a body still being read (Node's "aborted"). */
function senderWentAway(res: ServerResponse, err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return !res.headersSent && res.req.destroyed && code === "ECONNRESET";
}

/**
 * The one HTTP server: every route (README: Architecture) on one port. Transport only; the domain lives
 * behind the handlers it is given.
 */
export function createAppServer(deps: {
  logger: Logger;
  metrics: Metrics;
  handlers: readonly Handler[];
  /**
   * The hot path, tried before anything else: a request target matching `target` goes to
   * `handle` with its first capture, without URL parsing or per-request label lookups.
   */
  fast?: {
    target: RegExp;
    route: string;
    handle(req: IncomingMessage, res: ServerResponse, id: string): Promise<void>;
  };
  /** A request slower than this is logged (debug), by route and path. Default 5 s. */
  slowMs?: number;
}): Server {
  const { logger, metrics, handlers, fast } = deps;
  const slowMs = deps.slowMs ?? 5_000;
  // The fast route's request counters by status, resolved once instead of hashed per request.
  const fastCounts = new Map<number, { inc(): void }>();
  const countFast = (status: number) => {
    let c = fastCounts.get(status);
    if (!c) {
      c = metrics.httpRequests.labels({ route: fast?.route ?? "other", status: String(status) });
      fastCounts.set(status, c);
    }
    c.inc();
  };
  const failed = (res: ServerResponse) => (err: unknown) => {
    if (senderWentAway(res, err)) {
      // Nothing to answer and nothing of ours failed: not an error, not a 5xx.
      logger.debug({ code: (err as { code?: unknown }).code }, "request abandoned by its sender");
      res.statusCode = CLIENT_CLOSED;
      res.destroy();
      return;
    }
    logger.error({ err }, "request failed");
    if (!res.headersSent) sendJson(res, 500, { error: "internal error" });
    else res.destroy();
  };

  async function route(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    for (const handle of handlers) {
      if (await handle(req, res, url)) return;
    }
    sendJson(res, 404, { error: "not found" });
    req.resume();
  }

  const server = createServer((req, res) => {
    const plain = fast ? fast.target.exec(req.url ?? "") : null;
    if (fast && plain?.[1]) {
      // Counted when the route has answered (every path answers before it returns), without a
      // listener and a closure per request (thousands a second).
      fast.handle(req, res, plain[1]).then(
        () => countFast(res.statusCode),
        (err: unknown) => {
          failed(res)(err);
          countFast(res.statusCode);
        },
      );
      return;
    }
    const started = performance.now();
    let url: URL;
    try {
      url = new URL(req.url ?? "/", "http://localhost");
    } catch {
      // A request target like "//[" is no URL at all: refuse it rather than throw here.
      sendJson(res, 400, { error: "bad request target" });
      return;
    }
    const label = routeLabel(url.pathname);
    res.on("finish", () => {
      metrics.httpRequests.inc({ route: label, status: String(res.statusCode) });
      // The path, never the query: OAuth's redirect carries its one-time code there.
      if (performance.now() - started > slowMs) {
        logger.debug({ route: label, path: url.pathname }, "slow request");
      }
    });
    route(req, res, url).catch(failed(res));
  });
  // Slow-loris protection; Slack and the events service send whole requests promptly.
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.keepAliveTimeout = 65_000;
  return server;
}
