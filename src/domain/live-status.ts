import type { Deps } from "../deps.ts";
import type { EventRecord } from "../store/index.ts";
import type { Event } from "../upstream/events/schemas.ts";
import { occurrenceStarts } from "./instance-end.ts";
import { eventOf } from "./subscription.ts";
import { subscriptionOf } from "./subscriptions.ts";

/**
 * What the surfaces outside the channel card (unfurl, App Home, `/onair list` and `show`) show
 * of an event's current instance: read from the live engine (LivePort.figures), which applies
 * the one decision of when an instance has ended (instance-end.ts).
 */
export interface LiveStatus {
  state: string | undefined;
  present: number;
  peak: number;
  unique: number;
  /** When the current instance ended, if it has. */
  endedAt?: number;
  /** After an ended instance of a series: its next occurrence's start. */
  next?: number;
}

export async function liveStatus(
  deps: Deps,
  record: EventRecord,
  /** The event as just read (a GET, the subscription's copy); read here only when needed. */
  event?: Event,
): Promise<LiveStatus | undefined> {
  const f = await deps.live.figures(record.team, record.eventId);
  if (!f) return undefined;
  const out: LiveStatus = { state: f.state, present: f.present, peak: f.peak, unique: f.unique };
  const endedAt = f.endedAt;
  if (endedAt === undefined) return out;
  out.endedAt = endedAt;
  let e = event;
  if (!e) {
    const sub = await subscriptionOf(deps, record);
    e = sub ? eventOf(sub.sub) : undefined;
  }
  const next = e ? occurrenceStarts(e).find((s) => s > endedAt) : undefined;
  if (next !== undefined) out.next = next;
  return out;
}

/** Getting ready or live, and not ended: listed even when past its schedule (running over). */
export function onAir(live: LiveStatus | undefined): boolean {
  return (
    live !== undefined &&
    live.endedAt === undefined &&
    (live.state === "PREP_EVENT" || live.state === "IN_EVENT")
  );
}
