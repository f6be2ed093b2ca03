import { reportText } from "../blocks/report.ts";
import { hasBegun, instanceEndedAt, QUIET_END_MS, quietEndDue } from "../domain/instance-end.ts";
import type { InstanceSnapshot } from "../domain/report.ts";
import { asLiveSub, eventOf } from "../domain/subscription.ts";
import { renderReport } from "../report-upload.ts";
import {
  isPassingRefusal,
  isPlatformError,
  isRateLimited,
  slackErrorName,
} from "../slack-errors.ts";
import type { LiveEngine } from "./engine.ts";
import type { EventRun } from "./event-run.ts";
import { reportDue, scheduledEndOf } from "./planner.ts";
import { postOnce } from "./post-once.ts";
import type { PostContext } from "./posts/context.ts";
import { report, reported } from "./posts/report.ts";
import type { InstanceLive } from "./state.ts";

/**
 * The attendance report in the card's thread, posted once per instance and channel when the
 * instance ends. "Once" holds across a crash and across processes sharing a store: only the
 * event's owner posts (its lease), and the channel's live record names the instances reported.
 * A report whose upload had no recorded outcome (a kill mid-upload, a lost answer) is looked for
 * in the card's thread first (its files are named after the event and instance), as cards and
 * digests are (recover.ts): found, it is recorded; not found, it is posted.
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
  engine: LiveEngine,
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
  engine: LiveEngine,
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
  engine: LiveEngine,
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

export async function postReport(run: EventRun, cx: PostContext): Promise<void> {
  const { ch, c } = cx;
  const sub = run.sub?.sub;
  if (!c.cardTs) return;
  const instanceId = reportDue({ sub, live: run.live, channels: run.channels }, ch);
  const inst = instanceId === undefined ? undefined : run.live.instances.get(instanceId);
  const due =
    sub && inst && instanceId !== undefined
      ? {
          instanceId,
          draw: async () => {
            const zone = zoneOf(sub.event);
            const snap = { ...snapshotOf(inst), ...(zone ? { zone } : {}) };
            const files = await renderReport(snap, Date.now(), await run.emailsShown());
            return { files, text: reportText(eventOf(sub)?.title ?? "event", files.figures) };
          },
        }
      : undefined;
  // Nothing owed and nothing left in flight: nothing to do.
  if (!due && !c.reportPosting) return;
  try {
    await postOnce(run.port, ch, report(cx, c.cardTs, due, run.engine.options.shareSettleMs));
  } catch (err) {
    // A refusal (no files:write yet, uploads disabled) costs the report, not the channel's card.
    // One that passes (a limit, Slack's own trouble) is tried again, like a 429.
    // A posting limit (a locked thread) stops the thread's posts until notified again, and the
    // report waits with them (refusedPart).
    if (!due || !isPlatformError(err) || isRateLimited(err) || isPassingRefusal(err)) throw err;
    if (slackErrorName(err) === "posting_to_channel_denied") throw err;
    run.engine.deps.logger.warn(
      { channel: ch, eventId: run.eventId, error: slackErrorName(err) },
      "live: Slack refused the attendance report's upload; it is not tried again",
    );
    reported(c, due.instanceId);
    await run.save();
  }
}
