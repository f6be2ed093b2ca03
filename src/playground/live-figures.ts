import { liveRepo, loadEventLive, sessionsRepo } from "../live/live-record.ts";
import type { Store } from "../store/index.ts";

/** The figures the live panel shows: what the app's live engine holds, as the card shows them. */
export interface LiveFigures {
  instanceId: string;
  /** "NOT_STARTED" until the app has heard of a state. */
  state: string;
  present: number;
  peak: number;
  unique: number;
}

/**
 * Reads an event's current figures from the live engine's own record (the event record mirrors
 * them only when the state changes). The sessions are decoded again only when the record was
 * rewritten since the last read, so the page's polling costs one key read per event.
 */
export function createLiveFigures(store: () => Store | undefined) {
  const cache = new Map<string, { updatedAt: number; figures: LiveFigures | undefined }>();
  return async (team: string, eventId: string): Promise<LiveFigures | undefined> => {
    const s = store();
    if (!s) return undefined;
    const lives = s.repository(liveRepo);
    const record = await lives.get(`${team}:${eventId}`);
    if (!record) return undefined;
    const key = `${team}:${eventId}`;
    const hit = cache.get(key);
    if (hit && hit.updatedAt === record.updatedAt) return hit.figures;
    const { live } = await loadEventLive(lives, s.repository(sessionsRepo), team, eventId);
    const inst = live.current();
    const figures = inst && {
      instanceId: inst.id,
      state: inst.state ?? "NOT_STARTED",
      present: inst.present,
      peak: inst.peak,
      unique: inst.unique,
    };
    cache.set(key, { updatedAt: record.updatedAt, figures });
    return figures;
  };
}
