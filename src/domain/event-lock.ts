import type { Deps } from "../deps.ts";
import { USER_ERROR_CODES, UserFacingError } from "./errors.ts";

/**
 * One writer of an event's shared record at a time, across processes. The record
 * (`event:{team}:{eventId}`) is written by the organizer workflows (times, cancelled), by the
 * live lifecycle (subscriptions) and by the live worker (cards); each is a read-modify-write,
 * and two of them interleaved would undo one another. Whoever holds the lock reads the record
 * fresh, changes it and writes it back.
 */

/** The store key of the lock. */
export function eventLockKey(team: string, eventId: string): string {
  return `live-lock:${team}:${eventId}`;
}

/**
 * How long a claim lasts: long enough for a notify (an upstream registration), short enough that
 * a holder that crashed stops blocking the event soon after.
 */
export const EVENT_LOCK_MS = 30_000;
/** Waiting a little longer than a claim lasts outlives a crashed holder's claim. */
const WAIT_MS = EVENT_LOCK_MS + 5_000;
const STEP_MS = 50;

export interface EventLockOptions {
  /** How long to wait for a busy lock; 0 = try once. Default: longer than a claim lasts. */
  waitMs?: number;
}

/** The lock stayed busy for as long as the caller would wait. */
export class EventBusyError extends UserFacingError {
  constructor() {
    super(
      USER_ERROR_CODES.busy,
      "Someone else is changing this event right now. Try again in a moment.",
    );
  }
}

export async function withEventLock<T>(
  deps: Pick<Deps, "store">,
  team: string,
  eventId: string,
  fn: () => Promise<T>,
  opts: EventLockOptions = {},
): Promise<T> {
  const key = eventLockKey(team, eventId);
  const giveUpAt = Date.now() + (opts.waitMs ?? WAIT_MS);
  while (!(await deps.store.claimOnce(key, EVENT_LOCK_MS))) {
    if (Date.now() >= giveUpAt) throw new EventBusyError();
    await new Promise((r) => setTimeout(r, STEP_MS));
  }
  const claimedAt = Date.now();
  try {
    return await fn();
  } finally {
    // A claim that outlived EVENT_LOCK_MS has lapsed and may be someone else's now: leave it.
    if (Date.now() - claimedAt < EVENT_LOCK_MS) await deps.store.delete(key);
  }
}
