import { z } from "zod";
import {
  defineRepository,
  NOISE_LEVELS,
  type NoiseLevel,
  type Subscription,
} from "../store/index.ts";
import { type Event, eventSchema } from "../upstream/events/schemas.ts";
import type { Pending } from "./digest.ts";
import type { PersistedInstance } from "./state.ts";

/**
 * The live area's own records. The shared `sub:{id}` record (records.ts) is extended with the
 * per-channel settings (loose object): one subscription per event, fanned out to its channels.
 *
 * Secret choice: the webhook secret is never stored, only its SHA-256. Adding a channel to an
 * event that already has a subscription changes nothing upstream (same URL, same secret);
 * when the last channel is muted the subscription is deleted and both types are removed
 * upstream, so a later notify registers a fresh subscription with a fresh secret.
 */

// ---------------------------------------------------------------------------------------------
// Extensions of sub:{id}

const RemindersSchema = z.object({
  mins: z.array(z.number().int().positive()),
  scheduled: z.array(z.object({ id: z.string(), postAt: z.number() })),
});
export type ChannelReminders = z.output<typeof RemindersSchema>;

const SubExtension = z.object({
  channelNoise: z.record(z.string(), z.enum(NOISE_LEVELS)).optional(),
  /** The event's public facts for the card (organizer-only fields blanked). */
  event: z.unknown().optional(),
  cancelled: z.boolean().optional(),
  reminders: z.record(z.string(), RemindersSchema).optional(),
});

export type LiveSubscription = Subscription & z.output<typeof SubExtension>;

export function asLiveSub(sub: Subscription): LiveSubscription {
  const ext = SubExtension.safeParse(sub);
  return ext.success ? { ...sub, ...ext.data } : sub;
}

export function noiseOf(sub: LiveSubscription, channel: string): NoiseLevel {
  return sub.channelNoise?.[channel] ?? sub.noise;
}

export function eventOf(sub: LiveSubscription): Event | undefined {
  const parsed = eventSchema.safeParse(sub.event);
  return parsed.success ? (parsed.data as Event) : undefined;
}

/** What a channel may see: moderator and panelist links, passcodes and dial-in are blanked. */
export function publicEvent(e: Event): Event {
  return {
    ...e,
    moderatorUrl: "",
    panelistUrl: "",
    participantPasscode: "",
    attendeeMeetingPasscode: "",
    dialInNumbers: {},
    moderatorMessage: "",
    panelistMessage: "",
  };
}

// ---------------------------------------------------------------------------------------------
// live:{team}:{eventId} — written only by the event's current owner (worker.ts)

const PendingSchema = z.object({
  joined: z.number().int().nonnegative(),
  left: z.number().int().nonnegative(),
  sample: z.array(z.tuple([z.enum(["j", "l"]), z.string()], z.string())),
});

export const ChannelPostingSchema = z.object({
  cardTs: z.string().optional(),
  /** Hash of the card content last posted: a card is updated only when it would change. */
  cardHash: z.string().optional(),
  counterTs: z.string().optional(),
  counterHash: z.string().optional(),
  pending: PendingSchema,
  lastThreadAt: z.number().optional(),
  seq: z.number().int().nonnegative(),
  /** Slack's error when the channel refuses the app (archived, not found, …); cleared by notify. */
  blocked: z.string().optional(),
  /** A first card post went out at this time (ms) with no ts recorded yet (recover.ts). */
  cardPosting: z.number().optional(),
  /** The thread's running count went out at this time (ms) with no ts recorded yet. */
  counterPosting: z.number().optional(),
  /** A digest went out with no outcome recorded yet: its seq and exactly what it took. */
  digestPosting: z
    .object({ seq: z.number().int().positive(), taken: PendingSchema, at: z.number() })
    .optional(),
});
export interface ChannelPosting {
  cardTs?: string;
  cardHash?: string;
  counterTs?: string;
  counterHash?: string;
  pending: Pending;
  lastThreadAt?: number;
  seq: number;
  blocked?: string;
  cardPosting?: number;
  counterPosting?: number;
  digestPosting?: DigestPosting;
}

export interface DigestPosting {
  seq: number;
  taken: Pending;
  at: number;
}

export const LiveRecordSchema = z.object({
  team: z.string().min(1),
  eventId: z.string().min(1),
  // Checked when rebuilt (state.ts): validating 10,000 sessions here on every write would cost
  // more than the write.
  instances: z.array(z.custom<PersistedInstance>((v) => typeof v === "object" && v !== null)),
  channels: z.record(
    z.string(),
    ChannelPostingSchema.transform((c) => c as ChannelPosting),
  ) as z.ZodType<Record<string, ChannelPosting>>,
  updatedAt: z.number(),
});
export type LiveRecord = z.output<typeof LiveRecordSchema>;

export const liveRepo = defineRepository({
  prefix: "live",
  schema: LiveRecordSchema,
  team: "key",
});

/**
 * live-active:{team}:{eventId}: the event has work not yet posted. Whoever starts (or finds a
 * dead owner's lease expired) picks these up, so a restart drains what was acknowledged.
 */
export const activeRepo = defineRepository({
  prefix: "live-active",
  schema: z.object({ since: z.number() }),
  team: "key",
});

export const DEFAULT_NOISE: NoiseLevel = "digest";
export const DEFAULT_REMINDERS_MIN = [60, 10] as const;
