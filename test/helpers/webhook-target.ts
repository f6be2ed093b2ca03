import { randomBytes } from "node:crypto";
import { Agent, request } from "undici";
import { WEBHOOK_SECRET_HEADER } from "../../src/domain/subscription.ts";
import { liveRepo, loadEventLive, sessionsRepo } from "../../src/live/live-record.ts";
import { hashWebhookSecret, type Store } from "../../src/store/index.ts";

/**
 * A webhook subscription seeded straight into the store (the secret is then known to the test,
 * as it is to the events service), JOIN messages to send to it, and what the store holds of
 * them: the tests of group commit, frozen stores and crashes between write and ack.
 */

export interface WebhookTarget {
  readonly team: string;
  readonly eventId: string;
  readonly subscriptionId: string;
  readonly secret: string;
  /** `{origin}/webhooks/events/{subscriptionId}`. */
  url(origin: string): string;
}

export async function seedWebhookTarget(
  store: Store,
  opts: { team: string; eventId: string; channel: string },
): Promise<WebhookTarget> {
  const subscriptionId = randomBytes(18).toString("base64url");
  const secret = randomBytes(32).toString("base64url");
  await store.subscriptions.put(subscriptionId, {
    team: opts.team,
    eventId: opts.eventId,
    channels: [opts.channel],
    secretSha256: hashWebhookSecret(secret),
    types: ["EVENT_STATE", "ATTENDEE_INFO"],
    noise: "off",
    createdAt: Date.now(),
  });
  return {
    team: opts.team,
    eventId: opts.eventId,
    subscriptionId,
    secret,
    url: (origin) => `${origin}/webhooks/events/${subscriptionId}`,
  };
}

/** The endpointGuid of JOIN number `n` (unique per n). */
export const guidOf = (n: number) => `guid-${n}`;

export function joinBody(eventId: string, n: number, name = `Attendee ${n}`): string {
  return JSON.stringify({
    eventId,
    instanceId: "inst-1",
    type: "ATTENDEE_INFO",
    info: {
      endpointGuid: guidOf(n),
      endpointType: "browser",
      infoType: "JOIN",
      joinTime: 1_700_000_000_000 + n,
      name,
      email: `attendee-${n}@example.com`,
    },
  });
}

const agent = new Agent({ connections: 64 });

/**
 * Sends JOIN `n` and returns the status, or 0 when no answer came (connection reset, refused).
 * `timeoutMs` bounds the wait for the answer: past it the call throws.
 */
export async function postJoin(
  origin: string,
  target: WebhookTarget,
  n: number,
  opts: { name?: string; timeoutMs?: number } = {},
): Promise<number> {
  try {
    const res = await request(target.url(origin), {
      method: "POST",
      headers: { "content-type": "application/json", [WEBHOOK_SECRET_HEADER]: target.secret },
      body: joinBody(target.eventId, n, opts.name),
      dispatcher: agent,
      headersTimeout: opts.timeoutMs ?? 30_000,
    });
    await res.body.dump();
    return res.statusCode;
  } catch (err) {
    if ((err as { code?: string }).code === "UND_ERR_HEADERS_TIMEOUT") throw err;
    return 0;
  }
}

/**
 * Every endpointGuid the store holds for the event: in the outbox (not yet applied) or in the
 * live record (applied). Read in that order: the worker saves the record before it removes the
 * items, so an item leaving the outbox meanwhile is already in the record.
 */
export async function storedGuids(
  store: Store,
  team: string,
  eventId: string,
): Promise<Set<string>> {
  const out = new Set<string>();
  for (const { item } of await store.outbox.list()) {
    const guid = (item.message as { info?: { endpointGuid?: unknown } } | undefined)?.info
      ?.endpointGuid;
    if (item.eventId === eventId && typeof guid === "string") out.add(guid);
  }
  const lives = store.repository(liveRepo);
  const { live } = await loadEventLive(lives, store.repository(sessionsRepo), team, eventId);
  for (const instance of live.instances.values()) {
    for (const guid of instance.sessions.keys()) out.add(guid);
  }
  return out;
}
