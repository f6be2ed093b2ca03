import type { IncomingMessage, ServerResponse } from "node:http";
import type { Deps } from "../deps.ts";
import { sendJson, type WebhookHandler } from "../http/server.ts";
import { StoreError, webhookSecretMatches } from "../store/index.ts";
import { webhookMessageSchema } from "../upstream/events/schemas.ts";
import { asLiveSub, type LiveSubscription } from "./records.ts";
import { liveWorker } from "./runtime.ts";

/**
 * POST|PUT /webhooks/events/:subscriptionId — the hot path. Checks in this order: method (405),
 * subscription (404), secret in constant time (401), content type (415), size (413, decided
 * from content-length or while streaming, never by reading a huge body), JSON and schema (400).
 * A valid message is written to the outbox, and only then answered 204; posting happens
 * elsewhere (worker.ts). No upstream or Slack call here.
 */

export const WEBHOOK_SECRET_HEADER = "x-onair-secret";
export const WEBHOOK_BODY_LIMIT = 64 * 1024;

/** Subscription ids are 24 base64url characters; anything else cannot be one. */
const ID = /^[A-Za-z0-9_-]{16,64}$/;
const CACHE_MS = 1_000;
const CACHE_MAX = 10_000;

interface Cached {
  /** Validated once when read from the store, not on every message. */
  sub: LiveSubscription | undefined;
  at: number;
}

const caches = new WeakMap<Deps, Map<string, Cached>>();

function cacheOf(deps: Deps): Map<string, Cached> {
  let c = caches.get(deps);
  if (!c) {
    c = new Map();
    caches.set(deps, c);
  }
  return c;
}

/** After a local change (mute, cancel, new channel) this process sees it at once. */
export function forgetSubscription(deps: Deps, id: string): void {
  caches.get(deps)?.delete(id);
}

async function lookup(deps: Deps, id: string): Promise<LiveSubscription | undefined> {
  const cache = cacheOf(deps);
  const now = Date.now();
  const hit = cache.get(id);
  // A short cache: at thousands of messages a second one read per second per subscription is
  // enough, and a muted or uninstalled subscription stops within a second on every instance.
  if (hit && now - hit.at < CACHE_MS) return hit.sub;
  const found = await deps.store.subscriptions.get(id);
  const sub = found ? asLiveSub(found) : undefined;
  if (cache.size >= CACHE_MAX) cache.clear();
  cache.set(id, { sub, at: now });
  return sub;
}

/**
 * Answers without reading the rest of the body. A small body is drained so the connection can
 * be reused; a large or unknown-length one closes the connection after the answer instead.
 */
function refuse(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  error: string,
  headers: Record<string, string> = {},
): void {
  const length = Number(req.headers["content-length"]);
  const small = Number.isFinite(length) && length <= WEBHOOK_BODY_LIMIT;
  if (req.complete || small) {
    sendJson(res, status, { error }, headers);
    req.resume();
    return;
  }
  // Stop reading, say so, and close: the sender sees the answer while its upload stalls.
  req.pause();
  sendJson(res, status, { error }, { ...headers, connection: "close" });
  res.once("finish", () => {
    req.socket.end();
    setTimeout(() => req.socket.destroy(), 2_000).unref();
  });
}

function readCapped(req: IncomingMessage, limit: number): Promise<Buffer | "too_large"> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const onData = (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        done = true;
        req.off("data", onData);
        req.pause();
        resolve("too_large");
        return;
      }
      chunks.push(chunk);
    };
    req.on("data", onData);
    req.once("end", () => {
      if (done) return;
      done = true;
      resolve(Buffer.concat(chunks, size));
    });
    req.once("error", (err) => {
      if (done) return;
      done = true;
      reject(err);
    });
  });
}

function isJson(contentType: string | undefined): boolean {
  const type = (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  return type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"));
}

/** The reason zod gives, with paths, without the values (they are the sender's data). */
function reasonOf(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): string {
  return issues
    .slice(0, 3)
    .map((i) => `${i.path.map(String).join(".") || "body"}: ${i.message}`)
    .join("; ");
}

export function createWebhookHandler(getDeps: () => Deps | undefined): WebhookHandler {
  return async (req, res, subscriptionId) => {
    const deps = getDeps();
    const count = (outcome: string) => deps?.metrics.webhookMessages.inc({ outcome });
    const method = req.method ?? "";
    if (method !== "POST" && method !== "PUT") {
      count("method");
      refuse(req, res, 405, "use POST or PUT", { allow: "POST, PUT" });
      return;
    }
    if (!deps) {
      refuse(req, res, 503, "starting up; try again shortly", { "retry-after": "1" });
      return;
    }
    if (!ID.test(subscriptionId)) {
      count("unknown");
      refuse(req, res, 404, "unknown subscription");
      return;
    }
    let sub: LiveSubscription | undefined;
    try {
      sub = await lookup(deps, subscriptionId);
    } catch (err) {
      deps.logger.error({ err }, "webhook: subscription lookup failed");
      refuse(req, res, 503, "storage unavailable; try again", { "retry-after": "1" });
      return;
    }
    if (!sub || sub.cancelled) {
      count("unknown");
      refuse(req, res, 404, "unknown subscription");
      return;
    }
    const presented = req.headers[WEBHOOK_SECRET_HEADER];
    if (typeof presented !== "string" || !webhookSecretMatches(sub, presented)) {
      count("unauthorized");
      refuse(req, res, 401, "missing or wrong webhook secret");
      return;
    }
    if (!isJson(req.headers["content-type"])) {
      count("media_type");
      refuse(req, res, 415, "send application/json");
      return;
    }
    const declared = Number(req.headers["content-length"]);
    if (Number.isFinite(declared) && declared > WEBHOOK_BODY_LIMIT) {
      count("too_large");
      refuse(req, res, 413, `body over ${WEBHOOK_BODY_LIMIT} bytes`);
      return;
    }
    const body = await readCapped(req, WEBHOOK_BODY_LIMIT);
    if (body === "too_large") {
      count("too_large");
      refuse(req, res, 413, `body over ${WEBHOOK_BODY_LIMIT} bytes`);
      return;
    }
    let json: unknown;
    try {
      // JSON.parse makes "__proto__" an own key, never the prototype; zod then strips every key
      // the schema does not name.
      json = JSON.parse(body.toString("utf8"));
    } catch {
      count("invalid");
      sendJson(res, 400, { error: "the body is not valid JSON" });
      return;
    }
    const parsed = webhookMessageSchema.safeParse(json);
    if (!parsed.success) {
      count("invalid");
      sendJson(res, 400, { error: `invalid message: ${reasonOf(parsed.error.issues)}` });
      return;
    }
    if (parsed.data.eventId !== sub.eventId) {
      count("invalid");
      sendJson(res, 400, { error: "eventId does not match this subscription" });
      return;
    }
    try {
      await deps.store.outbox.put({
        team: sub.team,
        subscriptionId,
        eventId: sub.eventId,
        receivedAt: deps.now(),
        message: parsed.data,
      });
    } catch (err) {
      // Not stored, not acknowledged: the sender may retry.
      deps.logger.error(
        { err: err instanceof StoreError ? err : String(err) },
        "webhook: not stored",
      );
      count("store_error");
      sendJson(res, 503, { error: "storage unavailable; try again" }, { "retry-after": "1" });
      return;
    }
    count("accepted");
    res.writeHead(204).end();
    liveWorker(deps)?.nudge();
  };
}
