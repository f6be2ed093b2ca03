import type { Deps } from "../deps.ts";
import { EventBusyError, withEventLock } from "../domain/event-lock.ts";
import type { EventRecord } from "../store/index.ts";
import type { EventLive } from "./state.ts";

/**
 * What the live engine copies onto the shared event record (README: The store; store/records.ts): each
 * channel's card, and the state and figures per instance on state changes and ends.
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

/**
 * State per instance and figures on the shared event record, on state changes and ends only:
 * the instances the run knows, each with when it ended (instance-end.ts), if it has.
 */
export async function mirrorFigures(m: MirrorPort, live: EventLive): Promise<void> {
  const mirrored: Record<string, EventRecord["instances"][string]> = {};
  const at = Date.now();
  for (const id of live.order) {
    const inst = live.instances.get(id);
    if (!inst?.state) continue;
    mirrored[id] = {
      state: inst.state,
      present: inst.present,
      peak: inst.peak,
      unique: inst.unique,
      // The current instance is the newest: readers that sort by it find it first.
      updatedAt: id === live.current()?.id ? at : Math.min(at - 1, inst.lastAt),
      ...(inst.endedAt !== undefined ? { endedAt: inst.endedAt } : {}),
    };
  }
  if (Object.keys(mirrored).length === 0) return;
  await updateRecord(m, "figures", (rec) => ({
    ...rec,
    instances: { ...rec.instances, ...mirrored },
  }));
}
