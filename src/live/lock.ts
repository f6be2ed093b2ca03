import type { Deps } from "../deps.ts";
import { USER_ERROR_CODES, UserFacingError } from "../slack/access.ts";

/**
 * One writer of an event's shared record at a time, across processes. The record
 * (`event:{team}:{eventId}`) is written by the organizer workflows (times, cancelled), by the
 * live lifecycle (subscriptions) and by the live worker (cards); each is a read-modify-write,
 * and two of them interleaved would undo one another. Whoever holds the lock reads the record
 * fresh, changes it and writes it back.
 */

/** The store key of the lock; the live worker's record updates take the same key. */
export function eventLockKey(team: string, eventId: string): string {
  return `live-lock:${team}:${eventId}`;
}

/** Long enough for a notify (an upstream registration), short enough to outlive a crash. */
export const EVENT_LOCK_MS = 30_000;
const WAIT_MS = 15_000;
const STEP_MS = 50;

export async function withEventLock<T>(
  deps: Deps,
  team: string,
  eventId: string,
  fn: () => Promise<T>,
): Promise<T> {
  const key = eventLockKey(team, eventId);
  const giveUpAt = Date.now() + WAIT_MS;
  while (!(await deps.store.claimOnce(key, EVENT_LOCK_MS))) {
    if (Date.now() > giveUpAt) {
      throw new UserFacingError(
        USER_ERROR_CODES.invalid,
        "Someone else is changing this event right now. Try again in a moment.",
      );
    }
    await new Promise((r) => setTimeout(r, STEP_MS));
  }
  try {
    return await fn();
  } finally {
    await deps.store.delete(key);
  }
}
