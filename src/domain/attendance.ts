import type { AttendanceFigures, Deps } from "../deps.ts";
import type { EventRecord } from "../store/index.ts";
import type { Actor } from "./directory.ts";
import { USER_ERROR_CODES, UserFacingError } from "./errors.ts";
import { mayManage, unknownEvent } from "./event-record.ts";
import { type InstanceSnapshot, type ReportFigures, reportFigures } from "./report.ts";
import { subscriptionOf } from "./subscriptions.ts";

/**
 * The current instance's attendance. Open to the organizer and admins, and to anyone asking from
 * a channel that carries the event's card (where the figures are shown anyway); a forged button
 * from elsewhere learns nothing.
 */
export async function attendance(
  deps: Deps,
  actor: Actor,
  eventId: string,
  fromChannel: string | undefined,
): Promise<AttendanceFigures | undefined> {
  const record = await mayReadAttendance(deps, actor, eventId, fromChannel);
  return deps.live.figures(actor.team, record.eventId);
}

export interface AttendanceReport {
  record: EventRecord;
  title: string;
  /** The current instance; undefined before anyone joined or any state arrived. */
  snapshot: InstanceSnapshot | undefined;
  figures: ReportFigures | undefined;
  /** Whether the workspace shows attendee e-mails (the CSV's e-mail column). */
  withEmails: boolean;
  /** Whether the asker may have the files posted wherever they ask (organizer or admin). */
  manager: boolean;
}

/**
 * The attendance report of the current instance, for the card's Attendance button and
 * `/onair report`: the same people may see it as may see the figures (organizer, admins, and
 * members of a channel carrying the card, asking from there).
 */
export async function attendanceReport(
  deps: Deps,
  actor: Actor,
  eventId: string,
  fromChannel: string | undefined,
): Promise<AttendanceReport> {
  const record = await mayReadAttendance(deps, actor, eventId, fromChannel);
  const snapshot = await sharedSnapshot(deps, actor.team, record.eventId);
  const settings = await deps.store.settings.getOrDefault(actor.team);
  return {
    record,
    title: record.title ?? record.eventId,
    snapshot,
    figures: snapshot ? reportFigures(snapshot, deps.now()) : undefined,
    withEmails: settings.privacy.showAttendeeEmails,
    manager: await mayManage(actor, record),
  };
}

/**
 * A snapshot copies every attendee's sessions on the live worker: presses of Attendance (and
 * `/onair report`) within this long share one, so a channel of people pressing it, or one
 * person pressing it over and over, costs one copy every few seconds, not one each.
 */
const SNAPSHOT_REUSE_MS = 5_000;
const snapshots = new WeakMap<Deps, Map<string, Promise<InstanceSnapshot | undefined>>>();

function sharedSnapshot(
  deps: Deps,
  team: string,
  eventId: string,
): Promise<InstanceSnapshot | undefined> {
  let shared = snapshots.get(deps);
  if (!shared) {
    shared = new Map();
    snapshots.set(deps, shared);
  }
  const key = `${team}:${eventId}`;
  const hit = shared.get(key);
  if (hit) {
    deps.metrics.attendanceSnapshots.inc({ source: "reused" });
    return hit;
  }
  const taken = deps.live.snapshot(team, eventId);
  shared.set(key, taken);
  deps.metrics.attendanceSnapshots.inc({ source: "taken" });
  const forget = () => {
    if (shared.get(key) === taken) shared.delete(key);
  };
  setTimeout(forget, SNAPSHOT_REUSE_MS).unref();
  taken.catch(forget);
  return taken;
}

async function mayReadAttendance(
  deps: Deps,
  actor: Actor,
  eventId: string,
  fromChannel: string | undefined,
): Promise<EventRecord> {
  const record = eventId ? await deps.store.events.get(actor.team, eventId) : undefined;
  if (!record) throw unknownEvent(eventId);
  if (!(await mayManage(actor, record))) {
    const sub = await subscriptionOf(deps, record);
    if (!fromChannel || !sub?.sub.channels.includes(fromChannel)) {
      throw new UserFacingError(
        USER_ERROR_CODES.notAllowed,
        `Attendance is shown in the channels that carry the event's card, and to its organizer, <@${record.organizer}>.`,
      );
    }
  }
  return record;
}
