import { z } from "zod";
import { defineRepository, OutboxItemSchema, type Repository } from "../store/index.ts";
import { entryOf, type OutboxEntry } from "./outbox-entry.ts";

/**
 * Outbox items this version cannot read, kept instead of lost.
 *
 * The route accepts a message only once it reads (webhook schema), so an item the engine cannot
 * read was written by another version: during a rolling deploy, a newer instance accepts a
 * message of a kind an older one does not know, and the older one may own the event. It used to
 * be removed with its record, unread: a message acknowledged and lost. Now it is set aside at
 * `outbox-held:{itemId}` (`{team}:{eventId}:{seq}[/n]`) before its record goes, and whichever
 * version takes the event up next and reads it applies it then (`replay`), late, as the live
 * model takes a late message (a session is keyed by its join time; states only move forward).
 *
 * Set aside, not retried in place: the rest of the event's items go on, and a message no version
 * will ever read does not stop its card. Kept `HELD_TTL_MS`, long past any rollout, then purged by
 * the store's sweep; removed with the team's data on uninstall (LIVE_REPOSITORIES).
 */

/** How long an item no version has read is kept. */
export const HELD_TTL_MS = 7 * 24 * 60 * 60_000;

const HeldSchema = z.object({
  item: OutboxItemSchema,
  /** Epoch ms it was set aside. */
  at: z.number(),
});
export type Held = z.output<typeof HeldSchema>;

export const heldRepo = defineRepository({
  prefix: "outbox-held",
  schema: HeldSchema,
  team: "key",
  ttlOf: (v: Held) => v.at + HELD_TTL_MS - Date.now(),
});

/**
 * Sets aside the unreadable items among `items` (durably: the caller removes their records only
 * after). Returns how many. An item set aside twice (a crash before its record went) is one.
 */
export async function setAside(
  held: Repository<Held>,
  items: readonly OutboxEntry[],
  now: number,
): Promise<number> {
  let n = 0;
  for (const e of items) {
    if (e.kind !== "unreadable" || e.eventId === undefined) continue;
    await held.put(e.id, { item: e.item, at: now });
    n++;
  }
  return n;
}

/**
 * The event's items set aside that this version reads, as outbox entries (their `key` is the
 * held record's, removed once they are applied), and how many it still cannot read (kept).
 */
export async function readable(
  held: Repository<Held>,
  team: string,
  eventId: string,
): Promise<{ entries: OutboxEntry[]; unread: number }> {
  const entries: OutboxEntry[] = [];
  let unread = 0;
  // A held record that cannot be read at all is left to its TTL, as an unread item is.
  for (const { id, value } of await held.list(`${team}:${eventId}:`, {
    unreadable: () => unread++,
  })) {
    const entry = entryOf({ id, item: value.item, record: id, key: held.key(id) });
    if (entry.kind === "unreadable") unread++;
    else entries.push(entry);
  }
  return { entries, unread };
}
