import { randomBytes } from "node:crypto";
import type { Installation } from "@slack/bolt";
import { REDACTED, scrub } from "../log.ts";
import type { Cipher } from "./crypto.ts";
import { isUnopenable, STORE_ERROR_CODES, StoreError } from "./errors.ts";
import type { KeyValueStore } from "./kv.ts";
import {
  type AuditEntry,
  auditRepo,
  type CachedToken,
  DEFAULT_SETTINGS,
  type EventRecord,
  eventRepo,
  installationRepo,
  type OutboxItem,
  type OutboxWork,
  outboxRepo,
  outboxWorkRepo,
  type Settings,
  type Subscription,
  settingsRepo,
  subscriptionRepo,
  type TokenCache,
  tokenRepo,
  type UserLink,
  userRepo,
} from "./records.ts";
import { bindRepository } from "./repository.ts";

/**
 * The typed facades over the core records (records.ts): the calls the app makes, with the key
 * layouts of the store's records (records.ts) kept in one place, and time-ordered ids for the outbox and
 * the audit.
 */

const SECRET_DETAIL = /token|secret|password|passcode|credential|authorization/i;

/** An audit record never holds a token: secret-named details are dropped, text is scrubbed. */
function sanitizeAudit(entry: AuditEntry): AuditEntry {
  const out: AuditEntry = { ...entry, actor: scrub(entry.actor), action: scrub(entry.action) };
  if (entry.target !== undefined) out.target = scrub(entry.target);
  if (entry.details) {
    const d: Record<string, string | number | boolean | null> = {};
    for (const [k, v] of Object.entries(entry.details)) {
      d[k] = SECRET_DETAIL.test(k) ? REDACTED : typeof v === "string" ? scrub(v) : v;
    }
    out.details = d;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Time-ordered ids

let lastMs = 0;
let seq = 0;
// Ids from two processes in the same ms and counter differ by this (6 random hex digits, drawn
// once per process: drawing per id showed in the webhook ingest profile).
const processTag = randomBytes(3).toString("hex");

/**
 * Ids that sort by creation time: ms since epoch, then a counter within the ms (strictly
 * increasing within this process even if the clock steps back), then a per-process tag and
 * randomness so ids from several instances never collide.
 */
export function timeOrderedId(now = Date.now()): string {
  if (now > lastMs) {
    lastMs = now;
    seq = 0;
  } else {
    seq++;
  }
  return `${lastMs.toString(36).padStart(9, "0")}-${seq.toString(36).padStart(4, "0")}-${processTag}`;
}

// ---------------------------------------------------------------------------------------------
// Facades

export interface Repositories {
  installations: {
    get(owner: string): Promise<Installation | undefined>;
    put(owner: string, installation: Installation): Promise<void>;
    delete(owner: string): Promise<boolean>;
  };
  settings: {
    get(team: string): Promise<Settings | undefined>;
    /** Stored settings, or the defaults when the team has none yet. */
    getOrDefault(team: string): Promise<Settings>;
    put(team: string, settings: Settings): Promise<void>;
    delete(team: string): Promise<boolean>;
  };
  users: {
    get(team: string, slackUser: string): Promise<UserLink | undefined>;
    put(team: string, slackUser: string, link: UserLink): Promise<void>;
    delete(team: string, slackUser: string): Promise<boolean>;
    list(team: string): Promise<Array<{ slackUser: string; link: UserLink }>>;
  };
  tokens: {
    get(team: string, subject: string): Promise<CachedToken | undefined>;
    /** Expires from the store at `expiresAt`; an already expired token is removed instead. */
    put(team: string, subject: string, token: CachedToken): Promise<void>;
    delete(team: string, subject: string): Promise<boolean>;
    /** The token manager's cache, persistent and encrypted. */
    cache: TokenCache;
  };
  events: {
    get(team: string, eventId: string): Promise<EventRecord | undefined>;
    put(record: EventRecord): Promise<void>;
    delete(team: string, eventId: string): Promise<boolean>;
    list(team: string): Promise<EventRecord[]>;
  };
  subscriptions: {
    get(subscriptionId: string): Promise<Subscription | undefined>;
    put(subscriptionId: string, sub: Subscription): Promise<void>;
    delete(subscriptionId: string): Promise<boolean>;
    /** Reads every subscription: for cancel and uninstall, not for the webhook path. */
    forEvent(team: string, eventId: string): Promise<Array<{ id: string; sub: Subscription }>>;
  };
  outbox: {
    /**
     * Appends, keyed per event (`{team}:{eventId}:{seq}`) with the event's work marker in the same
     * group commit; resolves once both have committed. An item naming no event is keyed by
     * sequence alone, as earlier versions keyed every item. Returns the item's id.
     */
    put(item: OutboxItem): Promise<string>;
    get(id: string): Promise<OutboxItem | undefined>;
    /** Every item, in key order (per event in arrival order): the engine's sweep, and tooling. */
    list(limit?: number): Promise<Array<{ id: string; item: OutboxItem }>>;
    /** The events with work: one read, whatever the number of items. */
    work(): Promise<OutboxWorkMark[]>;
    /** One event's items, oldest first. */
    listEvent(
      team: string,
      eventId: string,
      limit?: number,
    ): Promise<Array<{ id: string; item: OutboxItem }>>;
    /** Items keyed by sequence alone (earlier versions'), oldest first. */
    listLegacy(limit?: number): Promise<Array<{ id: string; item: OutboxItem }>>;
    /**
     * Clears an event's marker if it still holds what `mark` read (compare-and-set), so a marker
     * rewritten by a newer item meanwhile stays. True when cleared.
     */
    settle(mark: OutboxWorkMark): Promise<boolean>;
    /** Marks an event as having work (items found with no marker). */
    markWork(team: string, eventId: string, last: string): Promise<void>;
    remove(id: string): Promise<boolean>;
    /** Reads of the outbox (listings of markers and items) and items written, since start. */
    counts(): { reads: number; written: number };
  };
  audit: {
    /** `at` defaults to now. Returns the record's id. */
    append(team: string, entry: Omit<AuditEntry, "at"> & { at?: number }): Promise<string>;
    /** Newest first. */
    list(team: string, limit?: number): Promise<Array<{ id: string; entry: AuditEntry }>>;
  };
}

/** An event with work in the outbox, as its marker holds it. */
export interface OutboxWorkMark extends OutboxWork {
  readonly team: string;
  readonly eventId: string;
}

/**
 * Legacy outbox ids are timeOrderedId()s: 9 base-36 digits of epoch ms, which start with "0"
 * until 2059; ids keyed per event start with a team id, and are told apart by their colons.
 */
const LEGACY_OUTBOX_PREFIX = "0";

function badId(what: string, v: unknown): never {
  throw new StoreError(
    STORE_ERROR_CODES.invalid,
    "validate",
    "schema",
    undefined,
    `${what} (got ${JSON.stringify(v)})`,
  );
}

function part(name: string, v: string): string {
  if (typeof v !== "string" || v === "" || v.includes(":")) {
    badId(`${name} must be a non-empty id without ":"`, v);
  }
  return v;
}

export function createRepositories(kv: KeyValueStore, cipher: Cipher): Repositories {
  const install = bindRepository(kv, cipher, installationRepo);
  const settings = bindRepository(kv, cipher, settingsRepo);
  const users = bindRepository(kv, cipher, userRepo);
  const tokens = bindRepository(kv, cipher, tokenRepo);
  const events = bindRepository(kv, cipher, eventRepo);
  const subs = bindRepository(kv, cipher, subscriptionRepo);
  const outbox = bindRepository(kv, cipher, outboxRepo);
  const outboxWork = bindRepository(kv, cipher, outboxWorkRepo);
  const outboxCounts = { reads: 0, written: 0 };
  /**
   * Outbox markers still to be written, by event: every item stored in one turn of the event
   * loop names its event's marker, and the marker is written once for all of them, naming the
   * newest (a group commit holds hundreds of one event's items; each wrote the same key before,
   * validated and serialised in full, only for the group writer to keep the last). Scheduled
   * with setImmediate before the first item's own write is issued: when that write is the
   * turn's first, the marker runs before the group writer's flush and joins the items' group
   * commit; otherwise (or while its key is still in flight) it goes in the next group. Either
   * way each caller awaits it before answering, so the engine, nudged after the answer, finds
   * it. Only the item's own write decides the answer: a marker whose write failed is put back
   * by the engine's sweep (engine.ts), and the message is stored.
   */
  const marks = new Map<string, { last: string; at: number; written: Promise<void> }>();
  const markLater = (event: string, last: string, at: number): Promise<void> => {
    const queued = marks.get(event);
    if (queued) {
      queued.last = last;
      queued.at = at;
      return queued.written;
    }
    const mark = { last, at, written: Promise.resolve() };
    mark.written = new Promise<void>((resolve) =>
      setImmediate(() => {
        marks.delete(event);
        outboxWork.put(event, { last: mark.last, at: mark.at }).then(
          () => resolve(),
          () => resolve(),
        );
      }),
    );
    marks.set(event, mark);
    return mark.written;
  };
  const audit = bindRepository(kv, cipher, auditRepo);

  const tokenId = (team: string, subject: string) => {
    if (typeof subject !== "string" || subject === "") badId("token subject is empty", subject);
    return `${part("team", team)}:${subject}`;
  };
  const putToken = async (id: string, token: CachedToken) => {
    const remaining = token.expiresAt - Date.now();
    if (remaining <= 0) {
      await tokens.delete(id);
      return;
    }
    await tokens.put(id, token, remaining);
  };
  /**
   * A cached upstream token no key opens (the store was sealed with a key since lost) is only a
   * cache miss: it is dropped, and the token manager fetches a new one.
   */
  const openableToken = async (id: string) => {
    try {
      return await tokens.get(id);
    } catch (err) {
      if (!isUnopenable(err)) throw err;
      await tokens.delete(id);
      return undefined;
    }
  };
  /** Cache keys are `{team}:{subject}`; the subject may itself hold colons. */
  const cacheId = (key: string) => {
    const i = key.indexOf(":");
    if (i <= 0 || i === key.length - 1) badId("token cache key must be {team}:{subject}", key);
    return tokenId(key.slice(0, i), key.slice(i + 1));
  };

  return {
    installations: {
      get: async (owner) => install.get(part("owner", owner)),
      put: async (owner, inst) => install.put(part("owner", owner), inst),
      delete: async (owner) => install.delete(part("owner", owner)),
    },
    settings: {
      get: async (team) => settings.get(part("team", team)),
      async getOrDefault(team) {
        return (await settings.get(part("team", team))) ?? structuredClone(DEFAULT_SETTINGS);
      },
      put: async (team, s) => settings.put(part("team", team), s),
      delete: async (team) => settings.delete(part("team", team)),
    },
    users: {
      get: async (team, u) => users.get(`${part("team", team)}:${part("user", u)}`),
      put: async (team, u, link) => users.put(`${part("team", team)}:${part("user", u)}`, link),
      delete: async (team, u) => users.delete(`${part("team", team)}:${part("user", u)}`),
      async list(team) {
        const p = `${part("team", team)}:`;
        return (await users.list(p)).map((r) => ({
          slackUser: r.id.slice(p.length),
          link: r.value,
        }));
      },
    },
    tokens: {
      get: async (team, subject) => openableToken(tokenId(team, subject)),
      put: async (team, subject, token) => putToken(tokenId(team, subject), token),
      delete: async (team, subject) => tokens.delete(tokenId(team, subject)),
      cache: {
        get: async (key) => openableToken(cacheId(key)),
        set: async (key, value) => putToken(cacheId(key), value),
        async delete(key) {
          await tokens.delete(cacheId(key));
        },
      },
    },
    events: {
      get: async (team, eventId) => events.get(`${part("team", team)}:${part("eventId", eventId)}`),
      put: async (r) => events.put(`${part("team", r.team)}:${part("eventId", r.eventId)}`, r),
      delete: async (team, eventId) =>
        events.delete(`${part("team", team)}:${part("eventId", eventId)}`),
      async list(team) {
        return (await events.list(`${part("team", team)}:`)).map((r) => r.value);
      },
    },
    subscriptions: {
      get: async (id) => subs.get(part("subscriptionId", id)),
      put: async (id, sub) => subs.put(part("subscriptionId", id), sub),
      delete: async (id) => subs.delete(part("subscriptionId", id)),
      async forEvent(team, eventId) {
        return (await subs.list())
          .filter((r) => r.value.team === team && r.value.eventId === eventId)
          .map((r) => ({ id: r.id, sub: r.value }));
      },
    },
    outbox: {
      async put(item) {
        const at = Date.now();
        const seq = timeOrderedId(at);
        if (item.eventId === undefined) {
          await outbox.put(seq, item);
          outboxCounts.written++;
          return seq;
        }
        const event = `${part("team", item.team)}:${part("eventId", item.eventId)}`;
        const id = `${event}:${seq}`;
        const marked = markLater(event, id, at);
        await outbox.put(id, item);
        await marked;
        outboxCounts.written++;
        return id;
      },
      get: async (id) => outbox.get(id),
      async list(limit) {
        outboxCounts.reads++;
        const rows = await outbox.list("", limit === undefined ? {} : { limit });
        return rows.map((r) => ({ id: r.id, item: r.value }));
      },
      async work() {
        outboxCounts.reads++;
        const out: OutboxWorkMark[] = [];
        for (const r of await outboxWork.list()) {
          const i = r.id.indexOf(":");
          if (i <= 0) continue;
          out.push({ team: r.id.slice(0, i), eventId: r.id.slice(i + 1), ...r.value });
        }
        return out;
      },
      async listEvent(team, eventId, limit) {
        outboxCounts.reads++;
        const p = `${part("team", team)}:${part("eventId", eventId)}:`;
        const rows = await outbox.list(p, limit === undefined ? {} : { limit });
        return rows.map((r) => ({ id: r.id, item: r.value }));
      },
      async listLegacy(limit) {
        outboxCounts.reads++;
        const rows = await outbox.list(LEGACY_OUTBOX_PREFIX, limit === undefined ? {} : { limit });
        return rows.filter((r) => !r.id.includes(":")).map((r) => ({ id: r.id, item: r.value }));
      },
      settle(mark) {
        const key = outboxWork.key(`${part("team", mark.team)}:${part("eventId", mark.eventId)}`);
        // Expired at once rather than deleted: only compare-and-set tells "still what I read".
        return kv.update<OutboxWork>(key, (v) =>
          v.last === mark.last && v.at === mark.at ? { value: v, ttlMs: 1 } : undefined,
        );
      },
      async markWork(team, eventId, last) {
        await outboxWork.put(`${part("team", team)}:${part("eventId", eventId)}`, {
          last,
          at: Date.now(),
        });
      },
      remove: async (id) => outbox.delete(id),
      counts: () => ({ ...outboxCounts }),
    },
    audit: {
      async append(team, entry) {
        const at = entry.at ?? Date.now();
        const id = `${part("team", team)}:${timeOrderedId(at)}`;
        await audit.put(id, sanitizeAudit({ ...entry, at }));
        return id;
      },
      async list(team, limit = 50) {
        const p = `${part("team", team)}:`;
        const rows = await audit.list(p, { reverse: true, limit });
        return rows.map((r) => ({ id: r.id, entry: r.value }));
      },
    },
  };
}
