import { hasBegun, instanceEndedAt, QUIET_END_MS, quietEndDue } from "../domain/instance-end.ts";
import type { InstanceSnapshot } from "../domain/report.ts";
import { asLiveSub, type LiveSubscription } from "../domain/subscription.ts";
import type { Store } from "../store/index.ts";
import { scheduledEndOf } from "./planner.ts";
import type { EventLive, InstanceLive } from "./state.ts";

/** Where the figures of an event are read: its owner's memory here, else the store (engine.ts). */
export interface FiguresSource {
  readonly runs: ReadonlyMap<
    string,
    { readonly live: EventLive; readonly sub: { sub: LiveSubscription } | undefined }
  >;
  loadLive(team: string, eventId: string): Promise<{ live: EventLive }>;
  readonly deps: { readonly store: Pick<Store, "events" | "subscriptions"> };
  readonly options: { readonly quietMs: number };
}

/**
 * An instance as the attendance report and the figures other surfaces show see it: its
 * snapshot, the event's zone, and when it ended (the quiet rule applied now when the owner has
 * not recorded it yet). Posting the report is a post kind like the others (posts/report.ts).
 */

export function snapshotOf(inst: InstanceLive): InstanceSnapshot {
  const attendees = [];
  for (const [guid, sessions] of inst.sessions) {
    const p = inst.people.get(guid);
    attendees.push({
      name: p?.name ?? "",
      ...(p?.email ? { email: p.email } : {}),
      endpointType: p?.endpointType ?? "",
      sessions: [...sessions],
    });
  }
  return {
    instanceId: inst.id,
    state: inst.state,
    marks: inst.marks.map((m) => [m[0], m[1]] as const),
    endedAt: inst.endedAt,
    attendees,
  };
}

/** The current instance's snapshot: the owner's memory if this process owns the event, else the store's. */
export async function engineSnapshot(
  engine: FiguresSource,
  team: string,
  eventId: string,
): Promise<InstanceSnapshot | undefined> {
  const live =
    engine.runs.get(`${team}:${eventId}`)?.live ?? (await engine.loadLive(team, eventId)).live;
  const inst = live.current();
  if (!inst) return undefined;
  const event = await eventSnapshotOf(engine, team, eventId);
  const zone = zoneOf(event);
  return {
    ...snapshotOf(inst),
    endedAt: await endedAtOf(engine, inst, event),
    ...(zone ? { zone } : {}),
  };
}

/** The event's zone in a subscription's copy of it (the chart is drawn in it). */
export function zoneOf(event: unknown): string | undefined {
  const zone = (event as { timezone?: unknown } | undefined)?.timezone;
  return typeof zone === "string" && zone ? zone : undefined;
}

/** The subscription's copy of the event: the owner's, else the store's. */
export async function eventSnapshotOf(
  engine: FiguresSource,
  team: string,
  eventId: string,
): Promise<unknown> {
  const run = engine.runs.get(`${team}:${eventId}`);
  if (run?.sub) return run.sub.sub.event;
  const { store } = engine.deps;
  const rec = await store.events.get(team, eventId);
  const subId = rec?.subscriptions[rec.subscriptions.length - 1];
  const sub = subId ? await store.subscriptions.get(subId) : undefined;
  return sub ? asLiveSub(sub).event : undefined;
}

/**
 * When `inst` ended, as instance-end.ts decides: recorded, or (between the quiet rule falling
 * due and the owner's lane recording it, or with no owner yet) the rule applied now.
 */
export function endedAtOf(
  engine: FiguresSource,
  inst: InstanceLive,
  /** The subscription's copy of the event (eventSnapshotOf). */
  event: unknown,
): number | undefined {
  if (inst.endedAt !== undefined || !hasBegun(inst)) return inst.endedAt;
  const end = scheduledEndOf(event, inst);
  return instanceEndedAt(inst, end, Date.now(), engine.options.quietMs);
}

/** Ends a begun instance whose scheduled end and last message are quietMs past; else when to look. */
export function endIfQuiet(
  inst: InstanceLive,
  end: number | undefined,
  now: number,
  quietMs = QUIET_END_MS,
): number | undefined {
  const due = quietEndDue(inst, end, quietMs);
  if (due === undefined || now < due) return due;
  const at = instanceEndedAt(inst, end, now, quietMs);
  if (at === undefined) return undefined;
  inst.endedAt = at;
  inst.marks.push(["ENDED", at]);
  return undefined;
}
