import { createHash } from "node:crypto";
import { z } from "zod";
import { defineRepository, type Repository } from "../store/index.ts";
import type { Pending } from "./digest.ts";
import { EventLive, type PersistedInstance } from "./state.ts";

/**
 * The live engine's own records: the event's live state and per-channel posting state, written
 * only by the event's current owner, and the marker of events with work not yet posted.
 */

// ---------------------------------------------------------------------------------------------
// live:{team}:{eventId} — written only by the event's current owner (worker.ts)

const PendingSchema = z.object({
  joined: z.number().int().nonnegative(),
  left: z.number().int().nonnegative(),
  sample: z.array(z.tuple([z.enum(["j", "l"]), z.string()], z.string())),
});

const ReminderSchema = z.object({
  id: z.string(),
  /** Epoch seconds, as Slack takes it. */
  postAt: z.number(),
  /** What the reminder says and when (reminders.ts); a change means delete and schedule anew. */
  key: z.string(),
});
export type ScheduledReminder = z.output<typeof ReminderSchema>;

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
  /** Reminders Slack holds for this channel (chat.scheduleMessage): id, when, and what. */
  reminders: z.array(ReminderSchema).optional(),
  /** A reminder was being scheduled with no id recorded yet (reminders.ts). */
  reminderPosting: z.object({ key: z.string(), postAt: z.number(), at: z.number() }).optional(),
  /** Instances whose attendance report this channel's thread has (the last few). */
  reported: z.array(z.string()).optional(),
  /** A report went out at this time with no outcome recorded yet. */
  reportPosting: z.object({ instanceId: z.string(), at: z.number() }).optional(),
  /** Muted here: the card's last words, frozen (the public event and figures at mute time). */
  muted: z.object({ event: z.unknown(), figures: z.unknown() }).optional(),
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
  reminders?: ScheduledReminder[];
  reminderPosting?: { key: string; postAt: number; at: number };
  reported?: string[];
  reportPosting?: { instanceId: string; at: number };
  muted?: { event: unknown; figures: unknown };
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

/**
 * live-sessions:{team}:{eventId}:{instance}:{n}: chunk n of an instance's sessions (state.ts),
 * beside the live record so a turn rewrites only the chunks it changed.
 */
export const sessionsRepo = defineRepository({
  prefix: "live-sessions",
  schema: z.string(),
  team: "key",
});

/** An instance id as a key part: fixed length, any characters the upstream sends. */
export function instanceKey(instanceId: string): string {
  return createHash("sha256").update(instanceId).digest("base64url").slice(0, 16);
}

export function sessionsId(team: string, eventId: string, instanceId: string, n: number): string {
  return `${team}:${eventId}:${instanceKey(instanceId)}:${n}`;
}

/** The live engine's repositories, for the store it runs on (deleteTeam covers them). */
export const LIVE_REPOSITORIES = [liveRepo, activeRepo, sessionsRepo] as const;

/** The event's live record and its figures, sessions read from their chunks. */
export async function loadEventLive(
  lives: Repository<LiveRecord>,
  sessions: Repository<string>,
  team: string,
  eventId: string,
): Promise<{ record: LiveRecord | undefined; live: EventLive }> {
  const record = await lives.get(`${team}:${eventId}`);
  if (!record?.instances.some((i) => i.chunks)) {
    return { record, live: EventLive.from(record?.instances) };
  }
  const rows = await sessions.list(`${team}:${eventId}:`);
  const texts = new Map(rows.map((r) => [r.id, r.value]));
  const live = EventLive.from(record.instances, (instanceId, n) =>
    texts.get(sessionsId(team, eventId, instanceId, n)),
  );
  return { record, live };
}
