import type { WebClient } from "@slack/web-api";

/**
 * Exactly-once posting across a crash. Before the worker posts an event's first card, a digest
 * or the thread's running count it records "in flight" on the live record and posts with metadata naming it; after
 * Slack answers it records the result and clears the mark. A process that finds the mark (the
 * previous one died, or the answer was lost) looks in Slack first: found, it adopts the message;
 * not found, it posts. These are the lookups.
 */

export const CARD_EVENT = "onair_card";
export const DIGEST_EVENT = "onair_digest";
export const COUNTER_EVENT = "onair_counter";

/**
 * How far before the mark a lookup reads: the mark is stored before the post, so only clock
 * skew between this host and Slack can put the message earlier. A narrow window keeps the
 * lookup to one page and cannot reach an older post of the same kind (a card replaced after
 * cant_update_message, an earlier digest).
 */
const CLOCK_SLACK_MS = 60_000;
/**
 * How far after the mark: the post went out right after the mark was stored; a call that hung
 * before Slack took it is bounded by the client's timeout, well inside this.
 */
const AFTER_MS = 2 * 60_000;
/**
 * Slack's limits for apps outside the Marketplace created since 2025-05-29: 15 objects a page
 * and one request a minute on conversations.history/replies. The window above rarely holds
 * more than one page; a throttled read resumes where it stopped (ScanProgress) instead of
 * starting over.
 */
const PAGE = 15;
const PAGES = 5;

/** Where a scan stopped, kept by the caller so a throttled scan resumes at its page. */
export interface ScanProgress {
  cursor?: string | undefined;
  page: number;
}

export function cardMetadata(eventId: string, hash: string) {
  return { event_type: CARD_EVENT, event_payload: { eventId, hash } };
}

export function digestMetadata(
  eventId: string,
  seq: number,
  taken: { joined: number; left: number },
) {
  return {
    event_type: DIGEST_EVENT,
    event_payload: { eventId, seq, joined: taken.joined, left: taken.left },
  };
}

export function counterMetadata(eventId: string) {
  return { event_type: COUNTER_EVENT, event_payload: { eventId } };
}

export interface Listed {
  ts?: string;
  user?: string;
  bot_id?: string;
  metadata?: { event_type?: string; event_payload?: unknown };
  files?: Array<{ name?: string }>;
}

type Payload = Record<string, unknown>;

function payloadOf(m: Listed, eventType: string, eventId: string): Payload | undefined {
  if (m.metadata?.event_type !== eventType) return undefined;
  const p = m.metadata.event_payload;
  if (typeof p !== "object" || p === null) return undefined;
  return (p as Payload).eventId === eventId ? (p as Payload) : undefined;
}

function oldest(since: number): string {
  return ((since - CLOCK_SLACK_MS) / 1000).toFixed(6);
}

function latest(since: number): string {
  return ((since + AFTER_MS) / 1000).toFixed(6);
}

/** Who this app posts as, per client (one auth.test per bot token and process). */
const identities = new WeakMap<WebClient, Promise<{ user?: string; bot?: string }>>();

function identityOf(client: WebClient): Promise<{ user?: string; bot?: string }> {
  let id = identities.get(client);
  if (!id) {
    id = client.auth.test().then((r) => ({
      ...(r.user_id ? { user: r.user_id } : {}),
      ...(r.bot_id ? { bot: r.bot_id } : {}),
    }));
    // A failed answer is not kept: the next lookup asks again.
    id.catch(() => identities.delete(client));
    identities.set(client, id);
  }
  return id;
}

/**
 * Reads pages until `match` finds a message this app posted; Slack's errors are thrown as they
 * come. Anyone can put a message in a channel or thread, with any file name or (from an app of
 * their own) any metadata: only the app's own posts are taken for what it may have posted.
 */
async function scan<T>(
  client: WebClient,
  read: (cursor: string | undefined) => Promise<{
    messages?: Listed[];
    response_metadata?: { next_cursor?: string };
  }>,
  match: (m: Listed) => T | undefined,
  progress: ScanProgress = { page: 0 },
): Promise<T | undefined> {
  const me = await identityOf(client);
  const mine = (m: Listed) =>
    (me.bot !== undefined && m.bot_id === me.bot) || (me.user !== undefined && m.user === me.user);
  while (progress.page < PAGES) {
    const res = await read(progress.cursor);
    for (const m of res.messages ?? []) {
      const found = mine(m) ? match(m) : undefined;
      if (found !== undefined) return found;
    }
    progress.page++;
    progress.cursor = res.response_metadata?.next_cursor || undefined;
    if (!progress.cursor) return undefined;
  }
  return undefined;
}

/** The event's card in the channel's history since `since` (ms): its ts and content hash. */
export function findCard(
  client: WebClient,
  channel: string,
  eventId: string,
  since: number,
  progress?: ScanProgress,
): Promise<{ ts: string; hash: string | undefined } | undefined> {
  return scan(
    client,
    (cursor) =>
      client.conversations.history({
        channel,
        oldest: oldest(since),
        latest: latest(since),
        inclusive: true,
        include_all_metadata: true,
        limit: PAGE,
        ...(cursor ? { cursor } : {}),
      }),
    (m) => {
      const p = payloadOf(m, CARD_EVENT, eventId);
      if (!p || !m.ts) return undefined;
      return { ts: m.ts, hash: typeof p.hash === "string" ? p.hash : undefined };
    },
    progress,
  );
}

/** A reply in the card's thread since `since` (ms) that `match` picks. */
export function findReply<T>(
  client: WebClient,
  channel: string,
  cardTs: string,
  since: number,
  match: (m: Listed) => T | undefined,
  progress?: ScanProgress,
): Promise<T | undefined> {
  return scan(
    client,
    (cursor) =>
      client.conversations.replies({
        channel,
        ts: cardTs,
        oldest: oldest(since),
        latest: latest(since),
        inclusive: true,
        include_all_metadata: true,
        limit: PAGE,
        ...(cursor ? { cursor } : {}),
      }),
    match,
    progress,
  );
}

/** A digest found in the thread: its ts and the counts it says it took (digestMetadata). */
export interface FoundDigest {
  ts: string;
  /** Undefined for a digest whose metadata carries no counts. */
  taken: { joined: number; left: number } | undefined;
}

/** The digest numbered `seq` in the card's thread since `since` (ms). */
export function findDigest(
  client: WebClient,
  channel: string,
  cardTs: string,
  eventId: string,
  seq: number,
  since: number,
  progress?: ScanProgress,
): Promise<FoundDigest | undefined> {
  return findReply(
    client,
    channel,
    cardTs,
    since,
    (m) => {
      const p = payloadOf(m, DIGEST_EVENT, eventId);
      if (p?.seq !== seq || !m.ts) return undefined;
      const { joined, left } = p;
      const counted = Number.isInteger(joined) && Number.isInteger(left);
      return {
        ts: m.ts,
        taken: counted ? { joined: joined as number, left: left as number } : undefined,
      };
    },
    progress,
  );
}

/** The running-count reply in the card's thread since `since` (ms): its ts. */
export function findCounter(
  client: WebClient,
  channel: string,
  cardTs: string,
  eventId: string,
  since: number,
  progress?: ScanProgress,
): Promise<string | undefined> {
  return findReply(
    client,
    channel,
    cardTs,
    since,
    (m) => (payloadOf(m, COUNTER_EVENT, eventId) ? m.ts : undefined),
    progress,
  );
}

/** The attendance report (files named `stem.*`) in the card's thread since `since` (ms): its ts. */
export function findReport(
  client: WebClient,
  channel: string,
  cardTs: string,
  stem: string,
  since: number,
  progress?: ScanProgress,
): Promise<string | undefined> {
  return findReply(
    client,
    channel,
    cardTs,
    since,
    (m) => ((m.files ?? []).some((f) => f.name?.startsWith(`${stem}.`)) ? m.ts : undefined),
    progress,
  );
}
