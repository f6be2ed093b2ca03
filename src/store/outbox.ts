import { prefixEnd } from "./backends/types.ts";
import type { Cipher } from "./crypto.ts";
import { STORE_ERROR_CODES, StoreError } from "./errors.ts";
import { part, timeOrderedId } from "./keys.ts";
import type { KeyValueStore } from "./kv.ts";
import {
  type OutboxItem,
  OutboxItemSchema,
  type OutboxWork,
  outboxBatchRepo,
  outboxRepo,
  outboxWorkRepo,
} from "./records.ts";
import { bindRepository } from "./repository.ts";

/**
 * The outbox: webhook messages acknowledged and not yet posted, and the markers that tell the
 * live engine which events have work. The route appends (`put`); the engine lists, applies, and
 * removes records (engine.ts).
 */

export interface Outbox {
  /**
   * Appends. The items of one event stored in one turn of the event loop go in one record
   * (`outbox-batch:{team}:{eventId}:{seq}`, in arrival order), written with the event's work
   * marker naming it (in the same group commit, or the next when the marker's key is still in
   * flight or the group is full); each resolves once both have committed. An item naming no event is
   * keyed by sequence alone, as earlier versions keyed every item. Returns the item's id.
   */
  put(item: OutboxItem): Promise<string>;
  get(id: string): Promise<OutboxItem | undefined>;
  /** Every item, in key order (per event in arrival order): the engine's sweep, and tooling. */
  list(limit?: number): Promise<OutboxRow[]>;
  /**
   * The events with work: one read, whatever the number of items. A marker that cannot be read
   * is handed to `unreadable` (with its id, `{team}:{eventId}`) and left out, so that one bad
   * marker does not hide every other event's; the engine writes it again at once (markAgain),
   * and the sweep would too, as for any event with records and no marker.
   */
  work(unreadable?: (id: string, err: StoreError) => void): Promise<OutboxWorkMark[]>;
  /**
   * Every event with records in the outbox, each with its first record, whatever the records of
   * other events before it: one read of one record per event, each after the last event's range
   * (at most `maxReads`). The engine's sweep, which looks for events with records and no marker.
   */
  eventsWithRecords(maxReads: number): Promise<OutboxEventRecords[]>;
  /**
   * One event's items, oldest first: its items of earlier versions (one record each) and its
   * batches, merged in order; about `limit` items, in whole records (see merged).
   */
  listEvent(team: string, eventId: string, limit?: number): Promise<OutboxRow[]>;
  /**
   * The same listing, and whether it stopped at a bound with records after it (`more`): at
   * `limit` items, or at the records a listing reads (`limit / 4` batches), which small records
   * reach long before `limit` items. The engine reads again at once, and keeps the event's
   * marker, while there is more.
   */
  eventPage(team: string, eventId: string, limit: number): Promise<OutboxPage>;
  /** Items keyed by sequence alone (earlier versions'), oldest first. */
  listLegacy(limit?: number): Promise<OutboxRow[]>;
  /**
   * Clears an event's marker if it still holds what `mark` read (compare-and-set), so a marker
   * rewritten by a newer item meanwhile stays. True when cleared.
   */
  settle(mark: OutboxWorkMark): Promise<boolean>;
  /**
   * Marks an event as having work (a record found with no marker). `at` (default now) is when
   * the marker counts from: a marker past the engine's staleness is cleared at its next turn.
   */
  markWork(team: string, eventId: string, last: string, at?: number): Promise<void>;
  remove(id: string): Promise<boolean>;
  /** Reads of the outbox (listings of markers and items) and items written, since start. */
  counts(): { reads: number; written: number };
}

/**
 * An item as listed: `id` is the item's own; `record` is the id of the record holding it (the
 * item itself, or its batch), which markers name; `key` is that record's store key, removed once
 * every item in it is applied (store.deleteMany).
 */
export interface OutboxRow {
  readonly id: string;
  readonly item: OutboxItem;
  readonly record: string;
  readonly key: string;
}

/** A listing, and whether records were left after it (see Outbox.eventPage). */
export interface OutboxPage {
  readonly rows: OutboxRow[];
  readonly more: boolean;
}

/** An event with records in the outbox, and the first of them (see Outbox.eventsWithRecords). */
export interface OutboxEventRecords {
  readonly team: string;
  readonly eventId: string;
  readonly record: string;
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

/**
 * Items per batch record at most: past a few dozen, a bigger record saves nothing more per item,
 * and a listing's read is bounded by records (see `listBoth`).
 */
const BATCH_MAX = 64;
/** A listing of `limit` items reads at most this share of `limit` in batch records. */
const BATCH_RECORDS_PER_ITEM = 1 / 4;

interface PendingBatch {
  readonly id: string;
  readonly items: OutboxItem[];
  readonly written: Promise<void>;
}

/**
 * Two listings of one key range (records of single items, batches) as one list in record order,
 * of about `limit` items (whole records: a record is applied and removed as one). Where a
 * listing was cut at its record limit, nothing after its last record is returned from the other
 * either, and the list ends at the first record boundary at or past `limit` items: the next read
 * starts there, and nothing is passed over.
 */
function merged(
  items: { rows: OutboxRow[]; cut: boolean },
  grouped: { rows: OutboxRow[]; cut: boolean },
  limit: number | undefined,
): OutboxPage {
  const all = [...items.rows, ...grouped.rows];
  if (items.rows.length > 0 && grouped.rows.length > 0) {
    all.sort((a, b) => (a.record < b.record ? -1 : a.record > b.record ? 1 : 0));
  }
  if (limit === undefined) return { rows: all, more: false };
  let cut: string | undefined;
  if (items.cut) cut = items.rows.at(-1)?.record;
  if (grouped.cut) {
    const last = grouped.rows.at(-1)?.record;
    if (last !== undefined && (cut === undefined || last < cut)) cut = last;
  }
  const out: OutboxRow[] = [];
  for (const r of all) {
    if (cut !== undefined && r.record > cut) break;
    if (out.length >= limit && out[out.length - 1]?.record !== r.record) break;
    out.push(r);
  }
  // A listing that read up to its bound may have records past it, read or not.
  return { rows: out, more: items.cut || grouped.cut || out.length < all.length };
}

/**
 * A batch's item checked as a record of its own would be, as it is written (`set`: the caller's
 * mistake) or read (`get`: the store's content is not what was written). records.ts says why
 * here and not for the batch as a whole.
 */
/** The key prefix of one event's records (both kinds). */
function eventPrefix(team: string, eventId: string): string {
  return `${part("team", team)}:${part("eventId", eventId)}:`;
}

function checkedItem(raw: unknown, op: "set" | "get", key: string, what: string): OutboxItem {
  const parsed = OutboxItemSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const where = parsed.error.issues.map((i) => i.path.join(".") || "item").join(", ");
  throw new StoreError(
    op === "set" ? STORE_ERROR_CODES.invalid : STORE_ERROR_CODES.corrupt,
    op,
    "schema",
    key,
    `${what} does not match its schema at ${where}`,
  );
}

export function createOutbox(kv: KeyValueStore, cipher: Cipher): Outbox {
  const outbox = bindRepository(kv, cipher, outboxRepo);
  const outboxWork = bindRepository(kv, cipher, outboxWorkRepo);
  const outboxCounts = { reads: 0, written: 0 };
  const batches = bindRepository(kv, cipher, outboxBatchRepo);
  /**
   * Batches still to be written, by event. Every item of an event stored in one turn of the
   * event loop joins one record, written once with the event's marker (naming it) when the turn
   * ends: scheduled with setImmediate as the turn's first item arrives, so both join the group
   * writer's next commit (the marker the one after, when its key is still in flight from the
   * last turn or the group is full; the engine finds a record either way). Every item's caller
   * awaits both: a failed write refuses them all (none was acknowledged), and each is answered
   * only once its record is stored. Only the record's write decides the answer: a marker whose
   * write failed is put back by the engine's sweep (engine.ts), and the messages are stored. A
   * batch is closed at BATCH_MAX items, so a record stays small whatever the burst.
   */
  const open = new Map<string, PendingBatch>();
  const batchLater = (event: string, item: OutboxItem, at: number): Promise<string> => {
    let b = open.get(event);
    if (!b || b.items.length >= BATCH_MAX) {
      const id = `${event}:${timeOrderedId(at)}`;
      const items: OutboxItem[] = [];
      const pending: PendingBatch = {
        id,
        items,
        written: new Promise<void>((resolve, reject) =>
          setImmediate(() => {
            if (open.get(event) === pending) open.delete(event);
            const stored = batches.put(id, { items });
            // Its failure is the sweep's to mend, not the callers'.
            const marked = outboxWork.put(event, { last: id, at }).catch(() => undefined);
            stored.then(() => marked.then(() => resolve()), reject);
          }),
        ),
      };
      b = pending;
      open.set(event, b);
    }
    const n = b.items.push(item) - 1;
    const { id, written } = b;
    return written.then(() => `${id}/${n}`);
  };
  /** A batch's items as rows, each id `{batch}/{n}`. */
  const batchRows = (id: string, batch: { items: unknown[] }): OutboxRow[] => {
    const key = batches.key(id);
    return batch.items.map((raw, n) => ({
      id: `${id}/${n}`,
      item: checkedItem(raw, "get", key, `item ${n}`),
      record: id,
      key,
    }));
  };
  /**
   * Both kinds of record under one id prefix, in order, about `limit` items (see merged): at most
   * `limit` records of single items and `limit / 4` batches (at most 16 × `limit` items read).
   */
  const listBoth = async (prefix: string, limit: number | undefined): Promise<OutboxPage> => {
    const batchLimit =
      limit === undefined ? undefined : Math.max(1, Math.ceil(limit * BATCH_RECORDS_PER_ITEM));
    const [items, grouped] = await Promise.all([
      outbox.list(prefix, limit === undefined ? {} : { limit }),
      batches.list(prefix, batchLimit === undefined ? {} : { limit: batchLimit }),
    ]);
    return merged(
      {
        rows: items.map((r) => itemRow(r.id, r.value)),
        cut: limit !== undefined && items.length >= limit,
      },
      {
        rows: grouped.flatMap((r) => batchRows(r.id, r.value)),
        cut: batchLimit !== undefined && grouped.length >= batchLimit,
      },
      limit,
    );
  };
  const itemRow = (id: string, item: OutboxItem): OutboxRow => ({
    id,
    item,
    record: id,
    key: outbox.key(id),
  });
  return {
    async put(item) {
      const at = Date.now();
      if (item.eventId === undefined) {
        const seq = timeOrderedId(at);
        await outbox.put(seq, item);
        outboxCounts.written++;
        return seq;
      }
      const event = `${part("team", item.team)}:${part("eventId", item.eventId)}`;
      // Validated now, as a record of its own would be: a bad item refuses only its caller.
      const valid = checkedItem(item, "set", `outbox-batch:${event}`, "an outbox item");
      const id = await batchLater(event, valid, at);
      outboxCounts.written++;
      return id;
    },
    async get(id) {
      const slash = id.lastIndexOf("/");
      const n = Number(id.slice(slash + 1));
      if (slash <= 0 || !Number.isInteger(n) || n < 0) return outbox.get(id);
      const record = id.slice(0, slash);
      const raw = (await batches.get(record))?.items[n];
      return raw === undefined
        ? undefined
        : checkedItem(raw, "get", batches.key(record), `item ${n}`);
    },
    async list(limit) {
      outboxCounts.reads++;
      return (await listBoth("", limit)).rows;
    },
    async work(unreadable) {
      outboxCounts.reads++;
      const out: OutboxWorkMark[] = [];
      for (const r of await outboxWork.list("", { unreadable })) {
        const i = r.id.indexOf(":");
        if (i <= 0) continue;
        out.push({ team: r.id.slice(0, i), eventId: r.id.slice(i + 1), ...r.value });
      }
      return out;
    },
    async eventsWithRecords(maxReads) {
      const found = new Map<string, OutboxEventRecords>();
      let reads = 0;
      // Both kinds of record; an id is `{team}:{eventId}:{seq}`, or a sequence alone (an item of
      // an earlier version naming no event, which listLegacy drains).
      const walk = async (
        first: (
          after: string | undefined,
        ) => Promise<{ id: string; item: OutboxItem | undefined } | undefined>,
      ) => {
        let after: string | undefined;
        while (reads < maxReads) {
          reads++;
          const row = await first(after);
          if (!row) return;
          const cut = row.id.lastIndexOf(":");
          if (cut < 0) {
            after = row.id;
            continue;
          }
          // Past every record of this event: its ids share `{team}:{eventId}:`.
          after = prefixEnd(row.id.slice(0, cut + 1));
          if (!row.item) continue;
          const { team, eventId } = row.item;
          if (eventId === undefined || found.has(`${team}:${eventId}`)) continue;
          found.set(`${team}:${eventId}`, { team, eventId, record: row.id });
        }
      };
      await walk(async (after) => {
        outboxCounts.reads++;
        const [r] = await outbox.list("", { limit: 1, ...(after === undefined ? {} : { after }) });
        return r && { id: r.id, item: r.value };
      });
      await walk(async (after) => {
        outboxCounts.reads++;
        const [r] = await batches.list("", { limit: 1, ...(after === undefined ? {} : { after }) });
        const raw = r?.value.items[0];
        if (!r || raw === undefined) return undefined;
        const parsed = OutboxItemSchema.safeParse(raw);
        // One event's unreadable record is that event's (its turns say so): stepped past, never
        // the end of the walk for the events after it.
        return { id: r.id, item: parsed.success ? parsed.data : undefined };
      });
      return [...found.values()];
    },
    async listEvent(team, eventId, limit) {
      outboxCounts.reads++;
      return (await listBoth(eventPrefix(team, eventId), limit)).rows;
    },
    async eventPage(team, eventId, limit) {
      outboxCounts.reads++;
      return listBoth(eventPrefix(team, eventId), limit);
    },
    async listLegacy(limit) {
      outboxCounts.reads++;
      const rows = await outbox.list(LEGACY_OUTBOX_PREFIX, limit === undefined ? {} : { limit });
      return rows.filter((r) => !r.id.includes(":")).map((r) => itemRow(r.id, r.value));
    },
    settle(mark) {
      const key = outboxWork.key(`${part("team", mark.team)}:${part("eventId", mark.eventId)}`);
      // Expired at once rather than deleted: only compare-and-set tells "still what I read".
      return kv.update<OutboxWork>(key, (v) =>
        v.last === mark.last && v.at === mark.at ? { value: v, ttlMs: 1 } : undefined,
      );
    },
    async markWork(team, eventId, last, at = Date.now()) {
      await outboxWork.put(`${part("team", team)}:${part("eventId", eventId)}`, { last, at });
    },
    remove: async (id) => outbox.delete(id),
    counts: () => ({ ...outboxCounts }),
  };
}
