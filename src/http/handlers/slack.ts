import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { verifySlackRequest } from "@slack/bolt";
import type { Logger } from "../../log.ts";
import type { Metrics } from "../../metrics.ts";
import { readCapped, refuse, sendJson } from "../body.ts";
import { ROUTES, SLACK_PATHS } from "../routes.ts";
import type { Handler } from "../server.ts";
import { readSlackBody } from "../slack-payload.ts";

/** Slack sends small bodies (a view submission is a few tens of KB); anything far larger is not Slack. */
export const SLACK_BODY_LIMIT = 1024 * 1024;
/** Slack's rule: a request more than five minutes off, either way, is refused. */
export const SLACK_MAX_SKEW_SEC = 300;

export interface SlackHandlerDeps {
  logger: Logger;
  metrics: Metrics;
  /** Bolt's HTTPReceiver listener; undefined when no Slack credentials are configured. */
  listener: RequestListener | undefined;
  signingSecret: string;
  now: () => number;
  /**
   * True the first time an Events API event id is seen (across instances, for a while): Slack
   * redelivers an event whose ack was slow, and a redelivery must not be acted on again.
   */
  firstDelivery(eventId: string): Promise<boolean>;
  /** Why no Slack request is taken now (starting or stopping), or undefined: see Readiness. */
  refusal?: () => string | undefined;
}

function freshTimestamp(header: string | string[] | undefined, nowMs: number): boolean {
  if (typeof header !== "string" || !/^\d{1,12}$/.test(header)) return false;
  return Math.abs(nowMs / 1000 - Number(header)) <= SLACK_MAX_SKEW_SEC;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === "string" ? v : undefined;
}

/**
 * `/slack/events` (commands, interactivity, Events API) and the OAuth routes, in front of Bolt:
 * a body cap; the unsigned `ssl_check` Slack sends when a request URL is saved; a timestamp
 * window both ways and the signature over the raw body; malformed signed payloads refused with
 * 400 before any listener runs; Events API redeliveries acknowledged without acting again.
 */
export function createSlackHandler(deps: SlackHandlerDeps): Handler {
  const { logger, metrics } = deps;
  return async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> => {
    const path = url.pathname;
    if (!SLACK_PATHS.has(path)) return false;
    if (!deps.listener) {
      sendJson(res, 503, { error: "Slack is not configured on this server" });
      req.resume();
      return true;
    }
    // Before Bolt can authorize and its listeners exist, an ack would promise what nobody does.
    const refusal = deps.refusal?.();
    if (refusal) {
      refuse(req, res, 503, refusal, { limit: SLACK_BODY_LIMIT, headers: { "retry-after": "1" } });
      return true;
    }
    if (req.method !== "POST") {
      deps.listener(req, res);
      return true;
    }
    const limit = { limit: SLACK_BODY_LIMIT };
    const declared = Number(req.headers["content-length"] ?? 0);
    if (declared > SLACK_BODY_LIMIT) {
      refuse(req, res, 413, `request body over ${SLACK_BODY_LIMIT} bytes`, limit);
      return true;
    }
    const body = await readCapped(req, SLACK_BODY_LIMIT);
    if (body === "too_large") {
      refuse(req, res, 413, `request body over ${SLACK_BODY_LIMIT} bytes`, limit);
      return true;
    }
    if (path === ROUTES.slackEvents) {
      const parsed = readSlackBody(body, header(req, "content-type"));
      if (parsed.kind === "ssl_check") {
        res.writeHead(200).end();
        return true;
      }
      if (!freshTimestamp(req.headers["x-slack-request-timestamp"], deps.now())) {
        // Bolt only rejects old timestamps; a request from the future is just as much a replay.
        sendJson(res, 401, { error: "stale or missing x-slack-request-timestamp" });
        return true;
      }
      try {
        verifySlackRequest({
          signingSecret: deps.signingSecret,
          body: body.toString("utf8"),
          headers: {
            "x-slack-signature": header(req, "x-slack-signature") ?? "",
            "x-slack-request-timestamp": Number(header(req, "x-slack-request-timestamp")),
          },
          nowMilliseconds: deps.now(),
        });
      } catch {
        sendJson(res, 401, { error: "bad or missing x-slack-signature" });
        return true;
      }
      if (parsed.kind === "malformed") {
        logger.info({ reason: parsed.reason }, "refused a malformed Slack request");
        sendJson(res, 400, { error: `malformed Slack request: ${parsed.reason}` });
        return true;
      }
      if (parsed.kind === "event" && parsed.eventId) {
        if (!(await deps.firstDelivery(parsed.eventId))) {
          logger.info(
            { eventId: parsed.eventId, retry: header(req, "x-slack-retry-num") },
            "Slack redelivered an event already taken; acknowledged without acting again",
          );
          res.writeHead(200).end();
          return true;
        }
      }
      const started = performance.now();
      res.once("finish", () =>
        metrics.slackAckSeconds.observe({ kind: "http" }, (performance.now() - started) / 1000),
      );
    }
    // Bolt reads a body already buffered on the request instead of the stream.
    (req as IncomingMessage & { rawBody?: Buffer }).rawBody = body;
    deps.listener(req, res);
    return true;
  };
}
