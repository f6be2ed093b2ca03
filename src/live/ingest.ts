import { hash, timingSafeEqual } from "node:crypto";
import type { Deps } from "../deps.ts";
import { asLiveSub, type LiveSubscription } from "../domain/subscription.ts";
import { StoreError } from "../store/index.ts";
import { webhookMessageSchema } from "../upstream/events/schemas.ts";

/**
 * What the webhook route calls: accept a message from the events service or refuse it, and say
 * why. Checks in this order: subscription (404), secret in constant time (401), content type
 * (415), declared size (413) — all before the body is read — then JSON and schema (400). An
 * accepted message is stored in the outbox, and only then may the route answer 2xx; posting
 * happens elsewhere (the engine). No upstream or Slack call here.
 */

export const WEBHOOK_BODY_LIMIT = 64 * 1024;

/** Subscription ids are 24 base64url characters; anything else cannot be one. */
const ID = /^[A-Za-z0-9_-]{16,64}$/;
const CACHE_MS = 1_000;
const CACHE_MAX = 10_000;

export type Outcome =
  | "accepted"
  | "unknown"
  | "unauthorized"
  | "media_type"
  | "too_large"
  | "invalid"
  | "store_error";

export interface Refusal {
  ok: false;
  status: 400 | 401 | 404 | 413 | 415 | 503;
  error: string;
  outcome: Outcome;
  /** Seconds, for 503s: try again then. */
  retryAfter?: number;
}

export interface Admitted {
  ok: true;
  subscriptionId: string;
  sub: LiveSubscription;
}

export interface RequestFacts {
  /** The secret header's value as sent (undefined when absent or repeated). */
  secret: string | undefined;
  contentType: string | undefined;
  /** Content-Length as sent; NaN when absent. */
  declaredLength: number;
}

function isJson(contentType: string | undefined): boolean {
  // What every sender sends, without splitting and lower-casing a copy (the hot path).
  if (contentType === "application/json") return true;
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

function refusal(
  status: Refusal["status"],
  outcome: Outcome,
  error: string,
  retryAfter?: number,
): Refusal {
  return { ok: false, status, outcome, error, ...(retryAfter ? { retryAfter } : {}) };
}

export const TOO_LARGE = refusal(413, "too_large", `body over ${WEBHOOK_BODY_LIMIT} bytes`);

interface Cached {
  /** Validated once when read from the store, not on every message. */
  sub: LiveSubscription | undefined;
  /** The secret's SHA-256, decoded once (not from hex on every message). */
  digest: Buffer | undefined;
  at: number;
}

/** Constant time: both sides are SHA-256 digests (a stored digest of another length never matches). */
function secretMatches(digest: Buffer, presented: string): boolean {
  // One-shot hash (Node >= 20.12): no Hash object per request.
  const d = hash("sha256", presented, "buffer");
  return digest.length === d.length && timingSafeEqual(d, digest);
}

export class Ingest {
  private readonly cache = new Map<string, Cached>();

  constructor(
    private readonly deps: Pick<Deps, "store" | "logger" | "now">,
    private readonly stored: () => void,
  ) {}

  /** After a local change (mute, cancel, new channel) this process sees it at once. */
  forget(subscriptionId: string): void {
    this.cache.delete(subscriptionId);
  }

  /** The cached entry while fresh, else undefined (read it with `read`). */
  private fresh(id: string): Cached | undefined {
    const hit = this.cache.get(id);
    // A short cache: at thousands of messages a second one read per second per subscription is
    // enough, and a muted or uninstalled subscription stops within a second on every instance.
    return hit && Date.now() - hit.at < CACHE_MS ? hit : undefined;
  }

  private async read(id: string): Promise<Cached> {
    const now = Date.now();
    const found = await this.deps.store.subscriptions.get(id);
    const sub = found ? asLiveSub(found) : undefined;
    const entry: Cached = {
      sub,
      digest: sub ? Buffer.from(sub.secretSha256, "hex") : undefined,
      at: now,
    };
    if (this.cache.size >= CACHE_MAX) this.cache.clear();
    this.cache.set(id, entry);
    return entry;
  }

  /**
   * Everything that can be decided before the body is read. Answered at once (no promise) when
   * the subscription is in the cache, as it is for all but one message a second of a busy one.
   */
  admit(
    subscriptionId: string,
    facts: RequestFacts,
  ): Admitted | Refusal | Promise<Admitted | Refusal> {
    if (!ID.test(subscriptionId)) return refusal(404, "unknown", "unknown subscription");
    const cached = this.fresh(subscriptionId);
    if (cached) return this.check(subscriptionId, cached, facts);
    return this.read(subscriptionId).then(
      (found) => this.check(subscriptionId, found, facts),
      (err: unknown) => {
        this.deps.logger.error({ err }, "webhook: subscription lookup failed");
        return refusal(503, "store_error", "storage unavailable; try again", 1);
      },
    );
  }

  private check(subscriptionId: string, found: Cached, facts: RequestFacts): Admitted | Refusal {
    const { sub, digest } = found;
    if (!sub || !digest || sub.cancelled || sub.gone)
      return refusal(404, "unknown", "unknown subscription");
    if (facts.secret === undefined || !secretMatches(digest, facts.secret)) {
      return refusal(401, "unauthorized", "missing or wrong webhook secret");
    }
    if (!isJson(facts.contentType)) return refusal(415, "media_type", "send application/json");
    if (Number.isFinite(facts.declaredLength) && facts.declaredLength > WEBHOOK_BODY_LIMIT) {
      return TOO_LARGE;
    }
    return { ok: true, subscriptionId, sub };
  }

  /** Parses, validates and stores the message; the route answers 2xx only after `ok`. */
  async accept(admitted: Admitted, body: Buffer): Promise<{ ok: true } | Refusal> {
    const { sub, subscriptionId } = admitted;
    let json: unknown;
    try {
      // JSON.parse makes "__proto__" an own key, never the prototype; zod then strips every key
      // the schema does not name.
      json = JSON.parse(body.toString("utf8"));
    } catch {
      return refusal(400, "invalid", "the body is not valid JSON");
    }
    const parsed = webhookMessageSchema.safeParse(json);
    if (!parsed.success) {
      return refusal(400, "invalid", `invalid message: ${reasonOf(parsed.error.issues)}`);
    }
    if (parsed.data.eventId !== sub.eventId) {
      return refusal(400, "invalid", "eventId does not match this subscription");
    }
    try {
      await this.deps.store.outbox.put({
        team: sub.team,
        subscriptionId,
        eventId: sub.eventId,
        receivedAt: this.deps.now(),
        message: parsed.data,
      });
    } catch (err) {
      // Not stored, not acknowledged: the sender may retry.
      this.deps.logger.error(
        { err: err instanceof StoreError ? err : String(err) },
        "webhook: not stored",
      );
      return refusal(503, "store_error", "storage unavailable; try again", 1);
    }
    this.stored();
    return { ok: true };
  }
}
