import { createHash, hash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Installation } from "@slack/bolt";
import { z } from "zod";
import { REDACTED, scrub } from "../log.ts";
import type { Cipher } from "./crypto.ts";
import { STORE_ERROR_CODES, StoreError } from "./errors.ts";
import type { KeyValueStore } from "./kv.ts";
import { bindRepository, defineRepository } from "./repository.ts";

/**
 * The records of DESIGN.md's "Data (keyv)" table, with their exact key layouts, and a small
 * typed facade for each. Feature-specific records beyond these belong in the feature's own
 * `defineRepository`.
 */

// ---------------------------------------------------------------------------------------------
// install:{team or enterprise}

const installationShape = z.looseObject({
  team: z.looseObject({ id: z.string().min(1) }).optional(),
  enterprise: z.looseObject({ id: z.string().min(1) }).optional(),
  user: z.looseObject({ id: z.string() }),
  bot: z.looseObject({ token: z.string(), id: z.string(), userId: z.string() }).optional(),
});

/** Bolt's Installation, kept whole (Bolt asks stores to keep every field it hands over). */
export const InstallationSchema = z.custom<Installation>(
  (v) => installationShape.safeParse(v).success,
  { message: "not a Slack installation (needs user.id and team.id or enterprise.id)" },
);

export const installationRepo = defineRepository({
  prefix: "install",
  schema: InstallationSchema,
  encryptedFields: ["bot.token", "bot.refreshToken", "user.token", "user.refreshToken"],
  team: "key",
});

/** The id an installation is stored under: the enterprise for an org-wide install, else the team. */
export function installationOwner(inst: Installation): string {
  const id = inst.isEnterpriseInstall ? inst.enterprise?.id : inst.team?.id;
  if (!id) throw new Error("installation names neither its team nor its enterprise");
  return id;
}

// ---------------------------------------------------------------------------------------------
// settings:{team}

/** Who may do something: everyone, workspace admins (and owners), or one user group. */
export const AudienceSchema = z.union([
  z.literal("everyone"),
  z.literal("admins"),
  z.strictObject({ usergroup: z.string().min(1) }),
]);
export type Audience = z.output<typeof AudienceSchema>;

/** The relay's own default validity (2 weeks) is also the default ceiling. */
export const DEFAULT_LONGEST_TOKEN_MS = 14 * 24 * 60 * 60 * 1000;

export const SettingsSchema = z.object({
  eventsAppKey: z.string().min(1).optional(),
  eventsAppSecret: z.string().min(1).optional(),
  relayUsername: z.string().min(1).optional(),
  relayPassword: z.string().min(1).optional(),
  policy: z.object({
    whoMaySchedule: AudienceSchema,
    whoMayMint: AudienceSchema,
  }),
  /** Longest relay token a user may mint, in ms. */
  longestTokenMs: z.number().int().positive(),
  auditChannel: z.string().min(1).optional(),
  privacy: z.object({ showAttendeeEmails: z.boolean() }),
  updatedAt: z.number().optional(),
  updatedBy: z.string().optional(),
});
export type Settings = z.output<typeof SettingsSchema>;

const defaults: Settings = {
  policy: { whoMaySchedule: "everyone", whoMayMint: "admins" },
  longestTokenMs: DEFAULT_LONGEST_TOKEN_MS,
  privacy: { showAttendeeEmails: false },
};
export const DEFAULT_SETTINGS: Readonly<Settings> = Object.freeze(defaults);

export const settingsRepo = defineRepository({
  prefix: "settings",
  schema: SettingsSchema,
  encryptedFields: ["eventsAppSecret", "relayPassword"],
  team: "key",
});

// ---------------------------------------------------------------------------------------------
// user:{team}:{slackUser}

export const UserLinkSchema = z.object({
  email: z.string().min(3),
  /** The events service's userId (a number in its token response). */
  userId: z.number().int(),
  enterpriseId: z.number().int(),
  linkedAt: z.number().optional(),
});
export type UserLink = z.output<typeof UserLinkSchema>;

export const userRepo = defineRepository({
  prefix: "user",
  schema: UserLinkSchema,
  team: "key",
});

// ---------------------------------------------------------------------------------------------
// token:{team}:{subject}

/** Same shape as the token manager's CachedToken (src/upstream/events/tokens.ts). */
export const CachedTokenSchema = z.object({
  accessToken: z.string().min(1),
  /** Epoch ms. */
  expiresAt: z.number(),
  userId: z.number().int().optional(),
  enterpriseId: z.number().int(),
});
export type CachedToken = z.output<typeof CachedTokenSchema>;

export const tokenRepo = defineRepository({
  prefix: "token",
  schema: CachedTokenSchema,
  encryptedFields: ["accessToken"],
  team: "key",
});

/** What the token manager needs; keys are `{team}:{subject}`. Failed reads throw. */
export interface TokenCache {
  get(key: string): Promise<CachedToken | undefined>;
  set(key: string, value: CachedToken): Promise<void>;
  delete(key: string): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// event:{team}:{eventId}

export const CardSchema = z.looseObject({
  /** The card message. */
  ts: z.string(),
  /** Where digests go; usually the card's ts. */
  threadTs: z.string().optional(),
});

export const InstanceSchema = z.looseObject({
  /** NOT_STARTED | PREP_EVENT | IN_EVENT; forward only within an instance. */
  state: z.string(),
  present: z.number().int().nonnegative().default(0),
  peak: z.number().int().nonnegative().default(0),
  unique: z.number().int().nonnegative().default(0),
  updatedAt: z.number().optional(),
});

/** Loose: features may keep more on an event without changing this schema. */
export const EventRecordSchema = z.looseObject({
  team: z.string().min(1),
  eventId: z.string().min(1),
  /** Slack user who scheduled or linked it. */
  organizer: z.string().min(1),
  /** The organizer's events-service userId (paths need it). */
  upstreamUserId: z.number().int().optional(),
  title: z.string().optional(),
  subscriptions: z.array(z.string()).default([]),
  /** Card per channel id. */
  cards: z.record(z.string(), CardSchema).default({}),
  /** Live figures per instanceId. */
  instances: z.record(z.string(), InstanceSchema).default({}),
  cancelled: z.boolean().optional(),
  createdAt: z.number(),
  updatedAt: z.number().optional(),
});
export type EventRecord = z.output<typeof EventRecordSchema>;

export const eventRepo = defineRepository({
  prefix: "event",
  schema: EventRecordSchema,
  team: "key",
});

// ---------------------------------------------------------------------------------------------
// sub:{subscriptionId}

export const NOISE_LEVELS = ["off", "counter", "digest", "every"] as const;
export type NoiseLevel = (typeof NOISE_LEVELS)[number];
export const WEBHOOK_TYPES = ["EVENT_STATE", "ATTENDEE_INFO"] as const;

export const SubscriptionSchema = z.looseObject({
  team: z.string().min(1),
  eventId: z.string().min(1),
  channels: z.array(z.string().min(1)).min(1),
  /** Hex SHA-256 of the webhook's secret header value. The secret itself is never stored. */
  secretSha256: z.string().regex(/^[0-9a-f]{64}$/),
  types: z.array(z.enum(WEBHOOK_TYPES)).min(1),
  noise: z.enum(NOISE_LEVELS),
  createdBy: z.string().optional(),
  createdAt: z.number(),
});
export type Subscription = z.output<typeof SubscriptionSchema>;

export const subscriptionRepo = defineRepository({
  prefix: "sub",
  schema: SubscriptionSchema,
  team: { field: "team" },
});

export function hashWebhookSecret(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

/** Constant time: both sides are SHA-256 digests of equal length. */
export function webhookSecretMatches(sub: Pick<Subscription, "secretSha256">, presented: string) {
  // One-shot hash (Node >= 20.12): no Hash object per request on the webhook hot path.
  const a = hash("sha256", presented, "buffer");
  const b = Buffer.from(sub.secretSha256, "hex");
  return b.length === a.length && timingSafeEqual(a, b);
}

// ---------------------------------------------------------------------------------------------
// outbox:{seq}

export const OutboxItemSchema = z.looseObject({
  team: z.string().min(1),
  subscriptionId: z.string().min(1),
  eventId: z.string().optional(),
  /** Epoch ms when the webhook was acknowledged. */
  receivedAt: z.number(),
  /** The validated webhook message. */
  message: z.unknown(),
});
export type OutboxItem = z.output<typeof OutboxItemSchema>;

export const outboxRepo = defineRepository({
  prefix: "outbox",
  schema: OutboxItemSchema,
  team: { field: "team" },
});

// ---------------------------------------------------------------------------------------------
// audit:{team}:{seq}

const Detail = z.union([z.string(), z.number(), z.boolean(), z.null()]);
export const AuditEntrySchema = z.object({
  at: z.number(),
  /** Slack user id, or "system". */
  actor: z.string().min(1),
  /** e.g. "event.schedule", "event.edit", "event.cancel", "token.mint", "settings.update". */
  action: z.string().min(1),
  target: z.string().optional(),
  details: z.record(z.string(), Detail).optional(),
});
export type AuditEntry = z.output<typeof AuditEntrySchema>;

export const auditRepo = defineRepository({
  prefix: "audit",
  schema: AuditEntrySchema,
  team: "key",
});

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
    /** Appends; returns the item's id. Ids sort in arrival order. */
    put(item: OutboxItem): Promise<string>;
    get(id: string): Promise<OutboxItem | undefined>;
    /** Oldest first. */
    list(limit?: number): Promise<Array<{ id: string; item: OutboxItem }>>;
    remove(id: string): Promise<boolean>;
  };
  audit: {
    /** `at` defaults to now. Returns the record's id. */
    append(team: string, entry: Omit<AuditEntry, "at"> & { at?: number }): Promise<string>;
    /** Newest first. */
    list(team: string, limit?: number): Promise<Array<{ id: string; entry: AuditEntry }>>;
  };
}

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
      get: async (team, subject) => tokens.get(tokenId(team, subject)),
      put: async (team, subject, token) => putToken(tokenId(team, subject), token),
      delete: async (team, subject) => tokens.delete(tokenId(team, subject)),
      cache: {
        get: async (key) => tokens.get(cacheId(key)),
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
        const id = timeOrderedId();
        await outbox.put(id, item);
        return id;
      },
      get: async (id) => outbox.get(id),
      async list(limit) {
        const rows = await outbox.list("", limit === undefined ? {} : { limit });
        return rows.map((r) => ({ id: r.id, item: r.value }));
      },
      remove: async (id) => outbox.delete(id),
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
