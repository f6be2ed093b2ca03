import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from "node:http";
import type { Logger } from "../log.ts";
import type { Metrics } from "../metrics.ts";

/** Slack sends small bodies (a view submission is a few tens of KB); anything far larger is not Slack. */
export const SLACK_BODY_LIMIT = 1024 * 1024;

export type WebhookHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  subscriptionId: string,
) => void | Promise<void>;
/** Returns false when the request is not its own. */
export type MountedHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
) => boolean | Promise<boolean>;

export interface AppServerDeps {
  logger: Logger;
  metrics: Metrics;
  /** Resolves when the app can serve (the store answers); rejects with the reason otherwise. */
  ready: () => Promise<void>;
  /** Bolt's HTTPReceiver listener: slash commands, interactivity, Events API, OAuth. */
  slack?: RequestListener | undefined;
  webhook?: WebhookHandler | undefined;
  /** Clock for the Slack timestamp check. Default Date.now. */
  now?: () => number;
  /** The embedded sandbox (/_sandbox/…), when no upstream URL is configured. */
  sandbox?: { handle(req: IncomingMessage, res: ServerResponse): boolean } | undefined;
  /** Playground mode: the page and its emulator routes. */
  playground?: MountedHandler | undefined;
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

function tooLarge(res: ServerResponse): void {
  // The rest of the body is discarded, then the connection closed: no keep-alive after a refusal.
  sendJson(
    res,
    413,
    { error: `request body over ${SLACK_BODY_LIMIT} bytes` },
    { connection: "close" },
  );
}

/**
 * The whole body, or undefined as soon as it passes `limit` bytes (the rest is then read and
 * dropped, so the refusal can still be answered on this connection).
 */
function readCapped(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off("data", onData);
        req.off("end", onEnd);
        req.off("error", onError);
        chunks.length = 0;
        req.on("error", () => {});
        req.resume();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => resolve(Buffer.concat(chunks, size));
    const onError = (err: Error) => reject(err);
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
  });
}

/** Slack's rule: a request more than five minutes off, either way, is refused. */
export const SLACK_MAX_SKEW_SEC = 300;

function freshSlackTimestamp(header: string | string[] | undefined, nowMs: number): boolean {
  if (typeof header !== "string" || !/^\d{1,12}$/.test(header)) return false;
  return Math.abs(nowMs / 1000 - Number(header)) <= SLACK_MAX_SKEW_SEC;
}

const SLACK_PATHS = new Set(["/slack/events", "/slack/install", "/slack/oauth_redirect"]);
const WEBHOOK_PREFIX = "/webhooks/events/";

/** Names the route for metrics by its template, never by its raw path (ids would explode the labels). */
function routeLabel(pathname: string): string {
  if (SLACK_PATHS.has(pathname)) return pathname;
  if (pathname.startsWith(WEBHOOK_PREFIX)) return "/webhooks/events/:id";
  if (pathname.startsWith("/_sandbox/")) return "/_sandbox";
  if (pathname === "/healthz" || pathname === "/readyz" || pathname === "/metrics") return pathname;
  if (pathname.startsWith("/playground") || pathname.startsWith("/_emulator")) return "/playground";
  return "other";
}

/**
 * The one HTTP server: every route of DESIGN.md on one port. Transport only; the domain lives in
 * the handlers it is given.
 */
export function createAppServer(deps: AppServerDeps): Server {
  const { logger, metrics } = deps;

  async function route(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const path = url.pathname;
    const method = req.method ?? "GET";

    if (path === "/healthz") {
      sendJson(res, 200, { ok: true });
      return;
    }
    if (path === "/readyz") {
      try {
        await deps.ready();
        sendJson(res, 200, { ok: true });
      } catch (err) {
        logger.warn({ err }, "readiness check failed");
        sendJson(res, 503, { ok: false, error: "the store does not answer" });
      }
      return;
    }
    if (path === "/metrics") {
      const text = await metrics.registry.metrics();
      res.writeHead(200, { "content-type": metrics.registry.contentType });
      res.end(text);
      return;
    }
    if (path.startsWith(WEBHOOK_PREFIX)) {
      const id = path.slice(WEBHOOK_PREFIX.length);
      if (!deps.webhook || id === "" || id.includes("/")) {
        sendJson(res, 404, { error: "unknown subscription" });
        return;
      }
      await deps.webhook(req, res, id);
      return;
    }
    if (SLACK_PATHS.has(path)) {
      if (!deps.slack) {
        sendJson(res, 503, { error: "Slack is not configured on this server" });
        return;
      }
      const length = Number(req.headers["content-length"] ?? 0);
      if (length > SLACK_BODY_LIMIT) {
        tooLarge(res);
        req.resume();
        return;
      }
      if (
        path === "/slack/events" &&
        !freshSlackTimestamp(req.headers["x-slack-request-timestamp"], (deps.now ?? Date.now)())
      ) {
        // Bolt checks the signature over the raw body, and only rejects old timestamps; a
        // request from the future is just as much a replay risk.
        sendJson(res, 401, { error: "stale or missing x-slack-request-timestamp" });
        req.resume();
        return;
      }
      if (method === "POST") {
        // A chunked body has no content-length to refuse early: count its bytes as they come.
        const body = await readCapped(req, SLACK_BODY_LIMIT);
        if (body === undefined) {
          tooLarge(res);
          return;
        }
        // Bolt reads a body already buffered on the request instead of the stream.
        (req as IncomingMessage & { rawBody?: Buffer }).rawBody = body;
        if (path === "/slack/events") {
          const started = performance.now();
          res.once("finish", () =>
            metrics.slackAckSeconds.observe({ kind: "http" }, (performance.now() - started) / 1000),
          );
        }
      }
      deps.slack(req, res);
      return;
    }
    if (deps.sandbox && path.startsWith("/_sandbox/") && deps.sandbox.handle(req, res)) return;
    if (deps.playground && (await deps.playground(req, res, url))) return;
    if (path === "/" && deps.playground && method === "GET") {
      res.writeHead(302, { location: "/playground" }).end();
      return;
    }
    sendJson(res, 404, { error: "not found" });
  }

  const server = createServer((req, res) => {
    const started = performance.now();
    // Parsed once per request: the route and the finish handler share it (hot path).
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
      if (performance.now() - started > 5_000) logger.debug({ url: req.url }, "slow request");
    });
    route(req, res, url).catch((err: unknown) => {
      logger.error({ err }, "request failed");
      if (!res.headersSent) sendJson(res, 500, { error: "internal error" });
      else res.destroy();
    });
  });
  // Slow-loris protection; Slack and the events service send whole requests promptly.
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.keepAliveTimeout = 65_000;
  return server;
}
