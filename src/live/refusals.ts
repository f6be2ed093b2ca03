import type { Logger } from "../log.ts";
import type { Repository } from "../store/index.ts";
import type { OutboxEntry } from "./outbox-entry.ts";
import { type Held, type HeldEvent, heldId } from "./set-aside.ts";

/**
 * An item this version reads but its event's live model throws on (a bug, met on one message):
 * left out, so that the event's other items, and its card, go on, and set aside with why
 * (set-aside.ts) for a process with the fix to apply.
 *
 * - No half-applied model is ever kept or saved: the throw stops the run at once (no lane plans
 *   from it, no save writes it), the engine reads the event again from its last save, which is
 *   whole, under the same lease, and the batch is applied again without the item. Nothing in that
 *   loop touches the store, so what threw was the item.
 * - A breaker: past `MAX_REFUSED` items of one event set aside with why within
 *   `REFUSAL_WINDOW_MS`, by any instance (counted from the held records themselves, so a restart
 *   or another instance does not start afresh, and an item set aside twice counts once), the fault
 *   is taken as the event's (a bug in what its state does, not in one message): nothing more is
 *   set aside, and the event's turn fails as before: its items stay, tried again after the
 *   back-off, and applied by themselves once a fix is deployed.
 * - An item set aside so is tried again only by a process started after it was set aside (a fix
 *   deployed, or a restart), or by one running other code (build-id.ts: a fix rolled out while
 *   the old code still ran), once (Refusals.pick); the instances of the same code running beside
 *   the one that refused it leave it alone.
 */

/** Items of one event set aside with why at most, within the window, before the fault is the event's. */
export const MAX_REFUSED = 3;
export const REFUSAL_WINDOW_MS = 10 * 60_000;
/** Held records of one event read at most to count its budget. */
const BUDGET_READ_MAX = 1_000;

/**
 * What this process knows of refusals: the held items it has tried (not again here), its code
 * and its start, against which a held item's `build` and `at` are read. Owned by the engine; every decision on held
 * items the model threw on is taken here.
 */
export class Refusals {
  private readonly tried = new Set<string>();

  constructor(
    private readonly held: Repository<Held>,
    private readonly logger: Logger,
    /** How far two instances' clocks may differ (engine options, `driftMs`). */
    private readonly driftMs: number,
    /** What code this process runs (engine options, `build`). */
    readonly build: string,
    private readonly startedAt = Date.now(),
  ) {}

  /**
   * Of an event's held entries, the ones this process applies now: any it has not tried yet,
   * but of those the model threw on (`why`), only ones set aside before this process started
   * (with the clocks' drift to spare) or by other code. Each is taken as tried from here,
   * whatever comes of it; `untry` undoes that (the store failed: nothing was tried).
   */
  pick(e: HeldEvent): { entries: OutboxEntry[]; untry(onlyUnrefused?: boolean): void } {
    const entries = e.entries.filter((x) => {
      if (this.tried.has(x.id)) return false;
      const r = e.refused.get(x.id);
      return (
        r === undefined ||
        r.at < this.startedAt - this.driftMs ||
        (r.build !== undefined && r.build !== this.build)
      );
    });
    for (const x of entries) this.remember(x.id);
    return {
      entries,
      untry: (onlyUnrefused = false) => {
        for (const x of entries)
          if (!onlyUnrefused || !e.refused.has(x.id)) this.tried.delete(x.id);
      },
    };
  }

  /**
   * Items the event may still have set aside with why: MAX_REFUSED less those set aside in the
   * window by any instance, not counting the batch's own (set aside before, by a turn that
   * failed before its records went). Read only when an item was refused.
   */
  async left(team: string, eventId: string, items: readonly OutboxEntry[]): Promise<number> {
    const own = new Set(items.map((e) => heldId(e)));
    const since = Date.now() - REFUSAL_WINDOW_MS;
    let recent = 0;
    // Newest first (ids are time-ordered): recent refusals are counted however many older records
    // the event has.
    for (const { id, value } of await this.held.list(`${team}:${eventId}:`, {
      reverse: true,
      limit: BUDGET_READ_MAX,
      unreadable: () => undefined,
    })) {
      if (value.why !== undefined && value.at >= since && !own.has(id)) recent++;
    }
    return Math.max(0, MAX_REFUSED - recent);
  }

  /** Items of `items` the model threw on: tried here (not again), and said, one line each. */
  said(
    eventId: string,
    items: readonly OutboxEntry[],
    refused: ReadonlyMap<string, string>,
    what: string,
  ): void {
    if (refused.size === 0) return;
    for (const e of items) {
      const why = refused.get(e.id);
      if (why === undefined) continue;
      this.remember(heldId(e) ?? e.id);
      this.logger.error(
        { event: eventId, item: e.id, why },
        `live: the live model threw on an outbox item; left out and ${what}, the event's other items go on`,
      );
    }
  }

  /**
   * Of the items refused again at a replay, those to write again with why and this code: any
   * other code refused (or set aside unread) before. One this code refused before keeps its
   * first record, so that only a process started since it, or of other code, tries it again.
   */
  rewrite(before: HeldEvent["refused"], refused: ReadonlyMap<string, string>): Map<string, string> {
    return new Map([...refused].filter(([id]) => before.get(id)?.build !== this.build));
  }

  private remember(id: string): void {
    // Bounded: forgotten all at once past a fleet's worth (each is then tried once more).
    if (this.tried.size >= 100_000) this.tried.clear();
    this.tried.add(id);
  }
}

/** Thrown by EventRun.ingest when the model throws on one item (`entry`), before any save. */
export class ItemError extends Error {
  constructor(
    readonly entry: OutboxEntry,
    cause: unknown,
  ) {
    super(`the live model could not take outbox item ${entry.id}: ${whyOf(cause)}`, { cause });
    this.name = "ItemError";
  }
}

/** What a refused item is kept with: the error's name and message, bounded. */
export function whyOf(err: unknown): string {
  const said = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return said.length > 300 ? `${said.slice(0, 299)}…` : said;
}

/** What applyRefusing needs of a run (EventRun). */
export interface Ingesting {
  readonly team: string;
  readonly eventId: string;
  ingest(items: readonly OutboxEntry[], skip: { has(id: string): boolean }): Promise<void>;
}

/** What applyRefusing needs of the engine. */
export interface RefusalPort<R extends Ingesting> {
  /**
   * A run stopped by a throw, read again from the event's last save under the same lease;
   * undefined when the lease is no longer its (the items stay for whoever owns it).
   */
  reload(run: R): Promise<R | undefined>;
  /**
   * The run let go as it is (the breaker), its lease given back, or kept to run out while a
   * Slack call of it is under way (engine.ts setDown).
   */
  abandon(run: R): Promise<void>;
}

export interface Applied<R extends Ingesting> {
  /** The run that applied the items: `run`, or the one read again after a refusal. */
  run: R;
  /** Items left out (id → why); none when the run was dropped (its items stay for the owner). */
  refused: Map<string, string>;
}

/**
 * Applies `items` to the event and saves them, leaving out each item the model throws on, up to
 * `budget()` of them (see above; asked at the first throw only). Throws what the run throws
 * otherwise (the store, the breaker).
 */
export async function applyRefusing<R extends Ingesting>(
  port: RefusalPort<R>,
  first: R,
  items: readonly OutboxEntry[],
  budget: () => Promise<number>,
): Promise<Applied<R>> {
  const refused = new Map<string, string>();
  let run = first;
  let left: number | undefined;
  for (;;) {
    try {
      await run.ingest(items, refused);
      return { run, refused };
    } catch (err) {
      if (!(err instanceof ItemError)) throw err;
      left ??= await budget().catch(async (e: unknown) => {
        await port.abandon(run);
        throw e;
      });
      if (refused.size >= left) {
        await port.abandon(run);
        throw new Error(
          `the live model threw on more than ${MAX_REFUSED} items of the event within ${REFUSAL_WINDOW_MS / 60_000} minutes: taken as the event's fault, not its items'`,
          { cause: err },
        );
      }
      refused.set(err.entry.id, whyOf(err.cause));
      const again = await port.reload(run);
      if (!again) return { run, refused: new Map() };
      run = again;
    }
  }
}
