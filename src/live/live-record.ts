import { createHash } from "node:crypto";
import { z } from "zod";
import { defineRepository, type Repository } from "../store/index.ts";
import type { Pending } from "./digest.ts";
import { heldRepo } from "./set-aside.ts";
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
  threadBlocked: z.string().optional(),
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
  /** The current instance's Slack call, held by one channel (posts/call.ts). */
  call: z
    .object({
      instanceId: z.string(),
      id: z.string().optional(),
      adding: z.number().optional(),
      blockTs: z.string().optional(),
      title: z.string().optional(),
      joinUrl: z.string().optional(),
      users: z.array(z.string()).optional(),
      synced: z.string().optional(),
      syncedAt: z.number().optional(),
      ended: z.boolean().optional(),
      skipped: z.string().optional(),
    })
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
  /** Slack refuses the card's thread (locked, or no threads here): the card goes on alone. */
  threadBlocked?: string;
  cardPosting?: number;
  counterPosting?: number;
  digestPosting?: DigestPosting;
  reminders?: ScheduledReminder[];
  reminderPosting?: { key: string; postAt: number; at: number };
  reported?: string[];
  reportPosting?: { instanceId: string; at: number };
  muted?: { event: unknown; figures: unknown };
  call?: CallPosting;
}

/** An instance's Slack call (posts/call.ts): its id, block, participants, end, or why none. */
export interface CallPosting {
  instanceId: string;
  /** Slack's call id, saved as soon as calls.add answers. */
  id?: string;
  /** calls.add and the call block went out at this time (ms) with no block recorded yet. */
  adding?: number;
  blockTs?: string;
  title?: string;
  joinUrl?: string;
  /** Slack users in the call, as this app added them. */
  users?: string[];
  /** The joins/leaves the participants were last brought up to date with, and when. */
  synced?: string;
  syncedAt?: number;
  ended?: boolean;
  /** Slack refused the Calls API (its error): no call for this instance. */
  skipped?: string;
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
 * live-sessions:{team}:{eventId}:{instance}:{n}.{gen}: chunk n of an instance's sessions
 * (state.ts) as written by save number `gen` (live-writer.ts), beside the live record so a turn
 * rewrites only the chunks it changed; the record names each chunk's generation. Records of an
 * earlier version name none: their chunks are at `…:{n}`.
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

/** Chunk n's id as written by save `gen` (0: an earlier version's key, without one). */
export function sessionsId(
  team: string,
  eventId: string,
  instanceId: string,
  n: number,
  gen = 0,
): string {
  const base = `${team}:${eventId}:${instanceKey(instanceId)}:${n}`;
  return gen === 0 ? base : `${base}.${gen}`;
}

/** The live engine's repositories, for the store it runs on (deleteTeam covers them). */
export const LIVE_REPOSITORIES = [liveRepo, activeRepo, sessionsRepo, heldRepo] as const;

/**
 * The record keeps each chunk's generation as runs, `[gen, count, gen, count, …]`: after a load
 * every chunk is written under one generation, and a burst then rewrites the last few, so a
 * 50,000-attendee instance (196 chunks) names its generations in a few numbers, not 196.
 * Undefined when every chunk is an earlier version's (no generation).
 */
export function gensRuns(gens: readonly number[], count: number): number[] | undefined {
  const runs: number[] = [];
  let any = false;
  for (let n = 0; n < count; n++) {
    const g = gens[n] ?? 0;
    if (g !== 0) any = true;
    if (runs.length > 0 && runs[runs.length - 2] === g)
      runs[runs.length - 1] = (runs.at(-1) ?? 0) + 1;
    else runs.push(g, 1);
  }
  return any ? runs : undefined;
}

/** Each of `count` chunks' generation, from the record's runs (0 where it names none). */
export function chunkGens(count: number, runs: readonly number[] | undefined): number[] {
  const gens: number[] = [];
  for (let i = 0; runs && i + 1 < runs.length; i += 2) {
    const g = runs[i] ?? 0;
    for (let k = 0; k < (runs[i + 1] ?? 0) && gens.length < count; k++) gens.push(g);
  }
  while (gens.length < count) gens.push(0);
  return gens;
}

/** What was found beside the record: for its next owner's writes (live-writer.ts). */
export interface StoredChunks {
  /** The highest generation of any chunk stored, named or not. */
  maxGen: number;
  /** Chunk ids the record does not name: left by a save that never finished. */
  unnamed: string[];
}

const LOAD_TRIES = 3;
const NOTHING_STORED: StoredChunks = Object.freeze({ maxGen: 0, unnamed: [] });

/** After `{team}:{eventId}:`: an instance key, the chunk's number, its generation if any. */
const CHUNK_ID = /^[A-Za-z0-9_-]{16}:\d+(?:\.(\d+))?$/;

/**
 * The event's live record and its figures, sessions read from the chunks it names. A version a
 * newer record replaced stays GARBAGE_GRACE_MS (live-writer.ts); a reader slower than that, or
 * one that read a record the next owner has since replaced, finds a chunk gone: it reads again.
 */
export async function loadEventLive(
  lives: Repository<LiveRecord>,
  sessions: Repository<string>,
  team: string,
  eventId: string,
): Promise<{ record: LiveRecord | undefined; live: EventLive; stored: StoredChunks }> {
  for (let attempt = 1; ; attempt++) {
    const record = await lives.get(`${team}:${eventId}`);
    if (!record?.instances.some((i) => i.chunks)) {
      return { record, live: EventLive.from(record?.instances), stored: NOTHING_STORED };
    }
    const prefix = `${team}:${eventId}:`;
    const rows = await sessions.list(prefix);
    const texts = new Map(rows.map((r) => [r.id, r.value]));
    const named = new Set<string>();
    let missing = false;
    const gens = new Map(record.instances.map((p) => [p.id, chunkGens(p.chunks ?? 0, p.gens)]));
    const live = EventLive.from(record.instances, (instanceId, n) => {
      const id = sessionsId(team, eventId, instanceId, n, gens.get(instanceId)?.[n] ?? 0);
      named.add(id);
      const text = texts.get(id);
      if (text === undefined) missing = true;
      return text;
    });
    if (missing && attempt < LOAD_TRIES) continue;
    const stored: StoredChunks = { maxGen: 0, unnamed: [] };
    for (const { id } of rows) {
      const m = CHUNK_ID.exec(id.slice(prefix.length));
      if (!m) continue;
      stored.maxGen = Math.max(stored.maxGen, Number(m[1] ?? 0));
      if (!named.has(id)) stored.unnamed.push(id);
    }
    return { record, live, stored };
  }
}
