import type { Deps } from "../deps.ts";
import { EventBusyError, withEventLock } from "../domain/event-lock.ts";
import type { EventRecord } from "../store/index.ts";

/**
 * What the live engine copies onto the shared event record (README: The store; store/records.ts): each
 * channel's card. The state and figures per instance are not copied: every surface reads them
 * from the engine (LivePort.figures, domain/live-status.ts), which reads its own live record;
 * `EventRecord.instances` keeps what earlier versions wrote there.
 */

export interface MirrorPort {
  readonly deps: Pick<Deps, "store" | "logger">;
  readonly team: string;
  readonly eventId: string;
  /** The run was let go: it records nothing more. */
  readonly dropped: boolean;
}

/**
 * Read-modify-write of the shared event record, only under the event's lock (domain/event-lock)
 * so it cannot undo a notify or mute; when the lock stays busy it is skipped: what it records is
 * informational and the next change records it again.
 */
async function updateRecord(
  m: MirrorPort,
  what: string,
  change: (rec: EventRecord) => EventRecord | undefined,
): Promise<void> {
  const { deps, team, eventId } = m;
  if (m.dropped) return;
  try {
    // A notify holds the lock for a moment; wait for it rather than skip the first card.
    await withEventLock(
      deps,
      team,
      eventId,
      async () => {
        const rec = await deps.store.events.get(team, eventId);
        const next = rec ? change(rec) : undefined;
        if (next) await deps.store.events.put(next);
      },
      { waitMs: 5_000 },
    );
  } catch (err) {
    if (err instanceof EventBusyError) return;
    deps.logger.warn({ err }, `live: ${what} not recorded on the event`);
  }
}

/** The shared event record keeps the card per channel. */
export async function mirrorCard(m: MirrorPort, ch: string, ts: string): Promise<void> {
  await updateRecord(m, "card", (rec) =>
    rec.cards[ch]?.ts === ts
      ? undefined
      : { ...rec, cards: { ...rec.cards, [ch]: { ts, threadTs: ts } } },
  );
}
