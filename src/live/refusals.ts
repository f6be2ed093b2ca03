import type { OutboxEntry } from "./outbox-entry.ts";

/**
 * An item this version reads but its event's live model throws on (a bug, met on one message):
 * left out, so that the event's other items, and its card, go on, and set aside with why
 * (set-aside.ts) for a process with the fix to apply.
 *
 * - No half-applied model is ever kept or saved: the throw stops the run at once (no lane plans
 *   from it, no save writes it), the engine reads the event again from its last save, which is
 *   whole, under the same lease, and the batch is applied again without the item. Nothing in that
 *   loop touches the store, so what threw was the item.
 * - A breaker: past `MAX_REFUSED` items of one event within `REFUSAL_WINDOW_MS` (however they
 *   came: in one batch or one a turn), the fault is taken as the event's (a bug in what its state
 *   does, not in one message), nothing more is set aside, and the event's turn fails as before:
 *   its items stay, tried again after the back-off, and applied by themselves once a fix is
 *   deployed.
 * - An item set aside so is tried again only by a process started after it was set aside (a fix
 *   deployed, or a restart), once (engine.ts, replayHeld); the instances running beside the one
 *   that refused it leave it alone.
 */

/** Items of one event left out at most, within the window, before the fault is the event's. */
export const MAX_REFUSED = 3;
export const REFUSAL_WINDOW_MS = 10 * 60_000;

/** Per event, the items refused lately: what is left of MAX_REFUSED. Owned by the engine. */
export class RefusalBudget {
  private readonly recent = new Map<string, { n: number; since: number }>();

  /** Items the event may still have left out now. */
  left(event: string, now = Date.now()): number {
    const r = this.recent.get(event);
    return r && now - r.since < REFUSAL_WINDOW_MS ? Math.max(0, MAX_REFUSED - r.n) : MAX_REFUSED;
  }

  spend(event: string, n: number, now = Date.now()): void {
    if (n === 0) return;
    const r = this.recent.get(event);
    if (r && now - r.since < REFUSAL_WINDOW_MS) r.n += n;
    else {
      // Bounded: a fleet's worth of events, forgotten all at once past that.
      if (this.recent.size >= 100_000) this.recent.clear();
      this.recent.set(event, { n, since: now });
    }
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
  /** The run let go as it is, its lease given back (the breaker). */
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
 * `budget` of them (see above). Throws what the run throws otherwise (the store, the breaker).
 */
export async function applyRefusing<R extends Ingesting>(
  port: RefusalPort<R>,
  first: R,
  items: readonly OutboxEntry[],
  budget: number,
): Promise<Applied<R>> {
  const refused = new Map<string, string>();
  let run = first;
  for (;;) {
    try {
      await run.ingest(items, refused);
      return { run, refused };
    } catch (err) {
      if (!(err instanceof ItemError)) throw err;
      if (refused.size >= budget) {
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
