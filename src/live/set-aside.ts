import { z } from "zod";
import {
  defineRepository,
  OutboxItemSchema,
  type Repository,
  STORE_ERROR_CODES,
  StoreError,
} from "../store/index.ts";
import { entryOf, type OutboxEntry } from "./outbox-entry.ts";

/**
 * Outbox items this version cannot read, kept instead of lost.
 *
 * The route accepts a message only once it reads (webhook schema), so an item the engine cannot
 * read was written by another version: during a rolling deploy, a newer instance accepts a
 * message of a kind an older one does not know, and the older one may own the event. It used to
 * be removed with its record, unread: a message acknowledged and lost. Now it is set aside at
 * `outbox-held:{team}:{eventId}:{item}` before its record goes, and the sweep of an engine that
 * reads it (every `sweepMs`, engine.ts) applies it, late, as the live model takes a late message
 * (a session is keyed by its join time; states only move forward), then removes it.
 *
 * An item this version reads but its live model throws on (a bug; refusals.ts) is set aside the
 * same way, with why: the sweep of the next process (a fix deployed) tries it again.
 *
 * Set aside, not retried in place: the rest of the event's items go on, and a message no version
 * will ever read does not stop its card. Kept `HELD_TTL_MS`, long past any rollout, then purged by
 * the store's sweep; removed with the team's data on uninstall (LIVE_REPOSITORIES).
 */

/** How long an item no version has read is kept. */
export const HELD_TTL_MS = 7 * 24 * 60 * 60_000;
/** Held records a sweep reads at most (a rollout's worth; the next sweep reads the rest). */
export const HELD_SWEEP_MAX = 1_000;

const HeldSchema = z.object({
  item: OutboxItemSchema,
  /** Epoch ms it was set aside. */
  at: z.number(),
  /** Set aside because the live model threw on it: the error's name and message. */
  why: z.string().optional(),
  /** With why: the code that threw (build-id.ts), so that other code tries it again. */
  build: z.string().optional(),
});
export type Held = z.output<typeof HeldSchema>;

export const heldRepo = defineRepository({
  prefix: "outbox-held",
  schema: HeldSchema,
  team: "key",
});

/**
 * What setAside did: items kept, unread and refused apart (the caller says each its own way), and
 * items it could not keep (logged by the caller).
 */
export interface SetAside {
  /** Items kept that this version does not read. */
  unread: number;
  /** Items kept that the live model threw on (with why). */
  refused: number;
  dropped: Array<{ id: string; reason: string }>;
}

/**
 * Sets aside the unreadable items among `items`, and those `refused` names (id → why), all in one
 * group of writes, durably (the caller removes their records only after). An item set aside twice
 * (a crash before its record went) is one: its id is its own. An item whose ids cannot make a key
 * (an earlier version's, or a key too long) cannot be kept, and is dropped as before, said by the
 * caller.
 */
export async function setAside(
  held: Repository<Held>,
  items: readonly OutboxEntry[],
  {
    refused,
    build,
    ttlMs = HELD_TTL_MS,
  }: { refused?: ReadonlyMap<string, string>; build?: string; ttlMs?: number } = {},
): Promise<SetAside> {
  const out: SetAside = { unread: 0, refused: 0, dropped: [] };
  // Most batches have none: nothing allocated per item for them (the engine's hot path).
  const aside = items.filter((e) => e.kind === "unreadable" || refused?.has(e.id) === true);
  if (aside.length === 0) return out;
  const at = Date.now();
  await Promise.all(
    aside.map(async (e) => {
      const id = heldId(e);
      if (id === undefined) {
        out.dropped.push({ id: e.id, reason: "it names no event a key can be made of" });
        return;
      }
      const why = refused?.get(e.id);
      try {
        await held.put(
          id,
          why === undefined
            ? { item: e.item, at }
            : { item: e.item, at, why, ...(build !== undefined && { build }) },
          ttlMs,
        );
        if (why === undefined) out.unread++;
        else out.refused++;
      } catch (err) {
        if (!(err instanceof StoreError) || err.code !== STORE_ERROR_CODES.invalid) throw err;
        out.dropped.push({ id: e.id, reason: err.message });
      }
    }),
  );
  return out;
}

/**
 * `{team}:{eventId}:{item}`: an item's id names its event already (`{team}:{eventId}:{seq}/{n}`),
 * an earlier version's may be a sequence alone. Undefined when no key can be made of it.
 */
export function heldId(e: OutboxEntry): string | undefined {
  if (e.eventId === undefined || e.team.includes(":") || e.eventId.includes(":")) return undefined;
  const prefix = `${e.team}:${e.eventId}:`;
  return e.id.startsWith(prefix) ? e.id : `${prefix}${e.id}`;
}

/** One event's held items that this version reads, as outbox entries (`key`: the held record). */
export interface HeldEvent {
  team: string;
  eventId: string;
  entries: OutboxEntry[];
  /** Of those, the ones set aside because the model threw on them (`why`): when, by what code. */
  refused: Map<string, { at: number; build?: string }>;
}

/**
 * The events with held items this version reads (up to `max` records read, after `after`), how
 * many held items it still cannot read, and where the next sweep reads on (undefined: from the
 * start again), so that records kept a week never hide the ones after them. A held record that
 * cannot be read at all is left to its TTL, as an item no version reads is.
 */
export async function readableHeld(
  held: Repository<Held>,
  after: string | undefined,
  max = HELD_SWEEP_MAX,
): Promise<{ events: HeldEvent[]; unread: number; next: string | undefined }> {
  const events = new Map<string, HeldEvent>();
  let unread = 0;
  let seen = 0;
  let last: string | undefined;
  const page = await held.list("", {
    limit: max,
    after,
    unreadable: (id) => {
      unread++;
      seen++;
      if (last === undefined || id > last) last = id;
    },
  });
  for (const { id } of page) {
    seen++;
    if (last === undefined || id > last) last = id;
  }
  for (const { id, value } of page) {
    const entry = entryOf({ id, item: value.item, record: id, key: held.key(id) });
    const i = id.indexOf(":");
    const j = id.indexOf(":", i + 1);
    if (entry.kind === "unreadable" || i <= 0 || j <= i + 1) {
      unread++;
      continue;
    }
    const event = id.slice(0, j);
    let e = events.get(event);
    if (!e) {
      e = { team: id.slice(0, i), eventId: id.slice(i + 1, j), entries: [], refused: new Map() };
      events.set(event, e);
    }
    e.entries.push(entry);
    if (value.why !== undefined) {
      e.refused.set(
        id,
        value.build === undefined ? { at: value.at } : { at: value.at, build: value.build },
      );
    }
  }
  // Only an empty page ends a round: a page can come back short with records after it (expired
  // records the store has not purged yet are left out of it, uncounted).
  return { events: [...events.values()], unread, next: seen === 0 ? undefined : last };
}
