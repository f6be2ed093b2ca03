import type { Installation } from "@slack/bolt";
import { REDACTED, scrub } from "../log.ts";
import type { Cipher } from "./crypto.ts";
import { isUnopenable } from "./errors.ts";
import { badId, part, timeOrderedId } from "./keys.ts";
import type { KeyValueStore } from "./kv.ts";
import { createOutbox, type Outbox } from "./outbox.ts";
import {
  type AuditEntry,
  auditRepo,
  type CachedToken,
  DEFAULT_SETTINGS,
  type EventRecord,
  eventRepo,
  installationRepo,
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
 * layouts of the store's records kept in one place. The outbox has its own file (outbox.ts);
 * ids and their parts are in keys.ts.
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
  outbox: Outbox;
  audit: {
    /** `at` defaults to now. Returns the record's id. */
    append(team: string, entry: Omit<AuditEntry, "at"> & { at?: number }): Promise<string>;
    /** Newest first. */
    list(team: string, limit?: number): Promise<Array<{ id: string; entry: AuditEntry }>>;
  };
}

export function createRepositories(kv: KeyValueStore, cipher: Cipher): Repositories {
  const install = bindRepository(kv, cipher, installationRepo);
  const settings = bindRepository(kv, cipher, settingsRepo);
  const users = bindRepository(kv, cipher, userRepo);
  const tokens = bindRepository(kv, cipher, tokenRepo);
  const events = bindRepository(kv, cipher, eventRepo);
  const subs = bindRepository(kv, cipher, subscriptionRepo);
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
    outbox: createOutbox(kv, cipher),
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
