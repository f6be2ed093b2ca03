import { setTimeout as sleep } from "node:timers/promises";
import type { Deps } from "../deps.ts";
import { type EventRecord, eventRepo } from "../store/index.ts";
import { EventsError } from "../upstream/errors.ts";
import type { Event } from "../upstream/events/schemas.ts";
import { withUserToken } from "./access.ts";
import { markGone, onEventCancelled, onEventEdited, onEventGone } from "./event-lifecycle.ts";
import { publicEvent } from "./subscription.ts";
import { subscriptionOf } from "./subscriptions.ts";

/**
 * At start, asks the events service about every event On Air still treats as alive, and marks
 * gone those it answers 404 for (deleted outside On Air, or a sandbox that forgot them): cards
 * say so, reminders go, webhooks are forgotten. Only a 404 means gone; a 5xx, a timeout or a
 * refused token says nothing about the event and leaves it as it is, for the next start or the
 * next command that reads it. An event whose copy changed since the cards last followed it (an
 * edit whose follow-up failed, or one made outside On Air) has its cards and reminders moved.
 *
 * Bounded: at most `concurrency` GETs in flight and at most `perSecond` started each second, so
 * a store of 1,000 events is walked in minutes, never in one burst at the service.
 */
export interface ReconcileOptions {
  concurrency?: number;
  perSecond?: number;
  signal?: AbortSignal;
}

export interface ReconcileOutcome {
  checked: number;
  gone: number;
  /** Not decided this time (an error other than 404, or the organizer not linked). */
  skipped: number;
}

export const RECONCILE_DEFAULTS = { concurrency: 2, perSecond: 5 } as const;

/** Events worth asking about: not cancelled or gone, and not long over. */
export function needsReconcile(r: EventRecord, now: number): boolean {
  if (r.cancelled || r.gone) return false;
  const lastEnd = (r as { lastEnd?: unknown }).lastEnd;
  return typeof lastEnd !== "number" || lastEnd >= now - 24 * 3_600_000;
}

/**
 * A record marked cancelled or gone whose subscription was not marked with it (the follow-up
 * hit a busy lock, or the process stopped between the two): its cards would stay live and its
 * reminders set, and no command reaches a cancelled event any more. Marked now (a cancel then
 * also tries its webhooks upstream once more).
 */
async function finishMarks(
  deps: Deps,
  records: readonly EventRecord[],
  signal: AbortSignal | undefined,
): Promise<number> {
  let finished = 0;
  // A mark is carried over soon or never: records changed within a week are looked at.
  const since = deps.now() - 7 * 24 * 3_600_000;
  for (const r of records) {
    if (signal?.aborted) break;
    if ((!r.cancelled && !r.gone) || r.subscriptions.length === 0) continue;
    if ((r.updatedAt ?? r.createdAt) < since) continue;
    try {
      const found = await subscriptionOf(deps, r);
      if (!found) continue;
      if (r.cancelled && !found.sub.cancelled) await onEventCancelled(deps, r.team, r.eventId);
      else if (r.gone && !r.cancelled && !found.sub.gone)
        await onEventGone(deps, r.team, r.eventId);
      else continue;
      finished++;
    } catch (err) {
      deps.logger.warn({ err, eventId: r.eventId }, "reconcile: a mark not carried to the cards");
    }
  }
  return finished;
}

/**
 * The service's copy differs from the one the cards and reminders follow (an edit whose
 * follow-up failed, or an edit made outside On Air): they follow it now.
 */
async function followChanges(deps: Deps, record: EventRecord, event: Event): Promise<void> {
  const found = record.subscriptions.length > 0 ? await subscriptionOf(deps, record) : undefined;
  if (!found || found.sub.cancelled || found.sub.gone) return;
  if (asEdited(publicEvent(event)) === asEdited(found.sub.event)) return;
  await onEventEdited(deps, record.team, record.eventId);
}

/**
 * What an edit changes, as one string: the copy without what moves on its own while the event
 * runs (its status, who is in), so a running event is not taken for an edited one.
 */
function asEdited(event: unknown): string {
  if (typeof event !== "object" || event === null) return "";
  const {
    status: _status,
    activeAttendeeCount: _count,
    ...rest
  } = event as Record<string, unknown>;
  return JSON.stringify(rest);
}

export async function reconcileEvents(
  deps: Deps,
  options: ReconcileOptions = {},
): Promise<ReconcileOutcome> {
  const concurrency = Math.max(1, options.concurrency ?? RECONCILE_DEFAULTS.concurrency);
  const gapMs = 1000 / Math.max(0.1, options.perSecond ?? RECONCILE_DEFAULTS.perSecond);
  const now = deps.now();
  const rows = await deps.store.repository(eventRepo).list("");
  const finished = await finishMarks(
    deps,
    rows.map((r) => r.value),
    options.signal,
  );
  if (finished > 0) {
    deps.logger.info({ finished }, "reconcile: cancel or gone marks carried over to their cards");
  }
  const queue = rows.map((r) => r.value).filter((r) => needsReconcile(r, now));
  const out: ReconcileOutcome = { checked: 0, gone: 0, skipped: 0 };
  let nextStart = Date.now();

  const one = async (record: EventRecord) => {
    const link = await deps.store.users.get(record.team, record.organizer);
    if (!link) {
      out.skipped++;
      return;
    }
    try {
      const event = await withUserToken(deps, record.team, link, (t) =>
        deps.events.getEvent(t.accessToken, t.userId, record.eventId),
      );
      out.checked++;
      await followChanges(deps, record, event);
    } catch (err) {
      if (err instanceof EventsError && err.status === 404) {
        out.checked++;
        out.gone++;
        await markGone(deps, record.team, record.eventId);
        return;
      }
      out.skipped++;
      deps.logger.info({ err, eventId: record.eventId }, "reconcile: event not checked this time");
    }
  };

  const worker = async () => {
    for (;;) {
      if (options.signal?.aborted) return;
      const record = queue.shift();
      if (!record) return;
      // Paced across workers: each start takes the next slot.
      const wait = nextStart - Date.now();
      nextStart = Math.max(nextStart, Date.now()) + gapMs;
      if (wait > 0) {
        await sleep(wait, undefined, { ref: false, signal: options.signal }).catch(() => undefined);
      }
      if (options.signal?.aborted) return;
      await one(record).catch((err: unknown) => {
        out.skipped++;
        deps.logger.warn({ err, eventId: record.eventId }, "reconcile: could not mark the event");
      });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return out;
}
