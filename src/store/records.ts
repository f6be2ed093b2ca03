import { createHash } from "node:crypto";
import type { Installation } from "@slack/bolt";
import { z } from "zod";
import { WEBHOOK_TYPES } from "../upstream/events/schemas.ts";
import { defineRepository } from "./repository.ts";

/**
 * The store's records (README: The store), each with its exact key layout, and a small
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
    /**
     * Guests (single- and multi-channel) may schedule and mint when the audiences above include
     * them. Off unless an admin turns it on (absent = off).
     */
    guestsMay: z.boolean().optional(),
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
  ttlOf: (t) => t.expiresAt - Date.now(),
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
  /** The events service no longer has it (deleted outside On Air): kept, marked, inert. */
  gone: z.boolean().optional(),
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

// ---------------------------------------------------------------------------------------------
// outbox:{team}:{eventId}:{seq}, and outbox:{seq} (written by earlier versions, or an item naming
// no event)

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
  // By field, not key: items of earlier versions are keyed by sequence alone.
  team: { field: "team" },
});

// ---------------------------------------------------------------------------------------------
// outbox-batch:{team}:{eventId}:{seq}

/**
 * The items of one event stored in one turn of the event loop, in arrival order: one record
 * (one row written, read and deleted) for what were as many records as messages. At tens of
 * thousands of messages a second the per-record costs (a row inserted and deleted, a value
 * serialised and validated, a key indexed) were most of what the store added over the floor. Apart
 * from `outbox:` so that an instance of an earlier version, which lists `outbox:` and reads
 * each value as one item, never meets one.
 */
/**
 * Its items are validated one by one (OutboxItemSchema), once as each is written and once as
 * each is read (outbox.ts), not again as a whole here: on the webhook path every item would be
 * checked twice, and a bad one refuses only its own caller.
 */
export const OutboxBatchSchema = z.object({ items: z.array(z.unknown()).min(1) });
export type OutboxBatch = z.output<typeof OutboxBatchSchema>;

export const outboxBatchRepo = defineRepository({
  prefix: "outbox-batch",
  schema: OutboxBatchSchema,
  team: "key",
});

// ---------------------------------------------------------------------------------------------
// outbox-work:{team}:{eventId}

/**
 * An event whose outbox holds work: written with each of its records (outbox.ts), so the engine
 * lists these (one short read) and then only the records of events it owns.
 */
export const OutboxWorkSchema = z.object({
  /** The id of the newest record (an item, or a batch of items) written with this marker. */
  last: z.string().min(1),
  /** Epoch ms of that write (the writer's clock). */
  at: z.number(),
});
export type OutboxWork = z.output<typeof OutboxWorkSchema>;

export const outboxWorkRepo = defineRepository({
  prefix: "outbox-work",
  schema: OutboxWorkSchema,
  team: "key",
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

/** The repositories of the records above; features bring their own beside these. */
export const CORE_REPOSITORIES = [
  installationRepo,
  settingsRepo,
  userRepo,
  tokenRepo,
  eventRepo,
  subscriptionRepo,
  outboxRepo,
  outboxBatchRepo,
  outboxWorkRepo,
  auditRepo,
] as const;
