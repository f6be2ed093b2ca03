import type { OutboxEntry } from "./outbox-entry.ts";

/**
 * An item this version reads but its event's live model throws on (a bug, met on one message):
 * left out, so that the event's other items, and its card, go on, and set aside with why
 * (set-aside.ts) for a process with the fix to apply.
 *
 * - No half-applied model is ever kept or saved: a throw drops the run with whatever it changed
 *   in memory (its last save is whole), the event is read again, and the batch applied again
 *   without the item. Nothing in that loop touches the store, so what threw was the item.
 * - A breaker: past `MAX_REFUSED` items of one batch, the fault is taken as the event's (a bug
 *   in what its state does, not in one message), nothing is set aside, and the event's turn
 *   fails as before: its items stay, tried again after the back-off, and applied by themselves
 *   once a fix is deployed.
 * - An item refused here is not tried again by this process (the engine remembers it); the sweep
 *   of the next one tries it once.
 */

/** Items of one batch left out at most before the fault is taken as the event's. */
export const MAX_REFUSED = 3;

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
  /** The run dropped as it is, its unsaved changes with it, its lease given back. */
  abandon(run: R): Promise<void>;
  /** The event taken up again from its last save; undefined when another instance has it now. */
  acquire(team: string, eventId: string): Promise<R | undefined>;
}

export interface Applied<R extends Ingesting> {
  /** The run that applied the items: `run`, or the one read again after a refusal. */
  run: R;
  /** Items left out (id → why); none when the run was dropped (its items stay for the owner). */
  refused: Map<string, string>;
}

/**
 * Applies `items` to the event and saves them, leaving out each item the model throws on (up to
 * MAX_REFUSED, see above). Throws what the run throws otherwise (the store, the breaker).
 */
export async function applyRefusing<R extends Ingesting>(
  port: RefusalPort<R>,
  first: R,
  items: readonly OutboxEntry[],
): Promise<Applied<R>> {
  const refused = new Map<string, string>();
  let run = first;
  for (;;) {
    try {
      await run.ingest(items, refused);
      return { run, refused };
    } catch (err) {
      if (!(err instanceof ItemError)) throw err;
      // Changed in memory up to the throw, never saved: dropped, and read again below.
      await port.abandon(run);
      if (refused.size >= MAX_REFUSED) {
        throw new Error(
          `the live model threw on more than ${MAX_REFUSED} items of one batch: taken as the event's fault, not its items'`,
          { cause: err },
        );
      }
      refused.set(err.entry.id, whyOf(err.cause));
      const again = await port.acquire(run.team, run.eventId);
      if (!again) return { run, refused: new Map() };
      run = again;
    }
  }
}
