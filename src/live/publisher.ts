import type { WebClient } from "@slack/web-api";
import { reportText } from "../blocks/report.ts";
import { eventOf, noiseOf } from "../domain/subscription.ts";
import {
  isPassingRefusal,
  isPlatformError,
  isRateLimited,
  slackErrorName,
} from "../slack-errors.ts";
import { type RenderedCard, renderCard } from "./card.ts";
import { digestText } from "./digest.ts";
import type { LiveModel, PostKind } from "./live-model.ts";
import type { ChannelPosting } from "./live-record.ts";
import { counterOf, mutedCard, reportDue } from "./planner.ts";
import { methodCall, type PostPort, postOnce } from "./post-once.ts";
import { keepCall } from "./posts/call.ts";
import { firstCard } from "./posts/card.ts";
import type { PostContext } from "./posts/context.ts";
import { counter } from "./posts/counter.ts";
import { digest } from "./posts/digest.ts";
import { reminder, SKIPPED } from "./posts/reminder.ts";
import { report, reported } from "./posts/report.ts";
import { deleteScheduled, forgetPosted, nextReminderStep, wantedReminders } from "./reminders.ts";
import { snapshotOf, zoneOf } from "./report-post.ts";
import { renderReport } from "./report-upload.ts";

/**
 * What a lane's turn posts: the kind the planner chose, through the one exactly-once protocol
 * (post-once.ts) with that kind's spec (posts/*.ts). Card updates and a reminder's deletion are
 * idempotent and need no mark.
 */

/** What a post reads and calls, handed by the event's runner (event-run.ts). */
export interface Publishing {
  readonly port: PostPort;
  readonly team: string;
  /** The runner's model as it is now (read, and recorded into through the specs). */
  readonly model: LiveModel;
  /** The channel's posting state, made when missing. */
  channel(ch: string): ChannelPosting;
  client(): Promise<WebClient>;
  emailsShown(): Promise<boolean>;
  /** The shared event record keeps the card per channel (README: The store; store/records.ts). */
  mirrorCard(ch: string, ts: string): Promise<void>;
  readonly shareSettleMs: number;
}

/**
 * One step toward the reminders the subscription wants in this channel: settle a mark whose
 * answer was lost, delete one nobody wants, or schedule a missing one.
 */
async function keepReminders(run: Publishing, cx: PostContext): Promise<void> {
  const { ch, c, client } = cx;
  const now = Date.now();
  const stillWanted = (key: string) =>
    wantedReminders(run.model.sub, ch, now).find((w) => w.key === key);
  if (c.reminderPosting) {
    await postOnce(run.port, ch, reminder(cx, undefined, stillWanted));
    return;
  }
  forgetPosted(c, now);
  const step = nextReminderStep(c, wantedReminders(run.model.sub, ch, now), now);
  if (!step) return;
  if (step.op === "delete") {
    if (!step.reminder.id.startsWith(SKIPPED)) {
      await methodCall(deleteScheduled(client, ch, step.reminder.id));
    }
    c.reminders = (c.reminders ?? []).filter((r) => r.id !== step.reminder.id);
    await run.port.save();
    return;
  }
  await postOnce(run.port, ch, reminder(cx, step.wanted, stillWanted));
}

/**
 * Updates the channel's card in place. A card someone deleted is forgotten (its thread's
 * running count too): a live channel gets a new one, a muted one none.
 */
async function updateCard(
  client: WebClient,
  ch: string,
  c: ChannelPosting,
  card: RenderedCard,
): Promise<void> {
  try {
    await client.chat.update({
      channel: ch,
      ts: c.cardTs ?? "",
      text: card.text,
      blocks: card.blocks,
    });
  } catch (err) {
    const code = slackErrorName(err);
    if (code !== "message_not_found" && code !== "cant_update_message") throw err;
    delete c.cardTs;
    delete c.counterTs;
    delete c.counterPosting;
    delete c.muted;
    return;
  }
  c.cardHash = card.hash;
}

export async function publish(run: Publishing, ch: string, kind: PostKind): Promise<void> {
  const sub = run.model.sub;
  const c = run.channel(ch);
  const client: WebClient = await run.client();
  const cx: PostContext = { port: run.port, ch, c, client };
  if (kind === "reminder") {
    await keepReminders(run, cx);
    return;
  }
  if (kind === "report") {
    await postReport(run, cx);
    return;
  }
  if (kind === "call") {
    await keepCall(run, cx);
    return;
  }
  const muted = kind === "card" ? mutedCard(run.model, ch) : undefined;
  if (muted && c.cardTs) {
    await updateCard(client, ch, c, muted);
    await run.port.save();
    return;
  }
  if (!sub) return;
  if (kind === "card") {
    const card = renderCard(sub, run.model.live, ch);
    if (!card) return;
    if (!c.cardTs) {
      await postOnce(run.port, ch, firstCard(cx, card));
      if (c.cardTs) void run.mirrorCard(ch, c.cardTs);
      return;
    }
    // Someone deleted the card: it is forgotten, and a new one is posted rather than keep failing.
    await updateCard(client, ch, c, card);
    await run.port.save();
    return;
  }
  if (!c.cardTs) return;
  const cardTs = c.cardTs;
  if (kind === "counter") {
    const text = counterOf(run.model.live);
    if (c.counterTs) {
      await client.chat.update({ channel: ch, ts: c.counterTs, text });
      c.counterHash = text;
      await run.port.save();
      return;
    }
    await postOnce(run.port, ch, counter(cx, cardTs, text));
    return;
  }
  await postOnce(
    run.port,
    ch,
    digest(cx, cardTs, async (taken) =>
      digestText(
        noiseOf(sub, ch),
        taken,
        { present: run.model.live.current()?.present ?? 0 },
        await run.emailsShown(),
      ),
    ),
  );
}

/** The attendance report an ended instance still owes the channel (posts/report.ts). */
async function postReport(run: Publishing, cx: PostContext): Promise<void> {
  const { ch, c } = cx;
  const { sub, live } = run.model;
  if (!c.cardTs) return;
  const instanceId = reportDue(run.model, ch);
  const inst = instanceId === undefined ? undefined : live.instances.get(instanceId);
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
    await postOnce(run.port, ch, report(cx, c.cardTs, due, run.shareSettleMs));
  } catch (err) {
    // A refusal (no files:write yet, uploads disabled) costs the report, not the channel's card.
    // One that passes (a limit, Slack's own trouble) is tried again, like a 429.
    // A posting limit (a locked thread) stops the thread's posts until notified again, and the
    // report waits with them (refusedPart).
    if (!due || !isPlatformError(err) || isRateLimited(err) || isPassingRefusal(err)) throw err;
    if (slackErrorName(err) === "posting_to_channel_denied") throw err;
    run.port.logger.warn(
      { channel: ch, eventId: run.port.eventId, error: slackErrorName(err) },
      "live: Slack refused the attendance report's upload; it is not tried again",
    );
    reported(c, due.instanceId);
    await run.port.save();
  }
}
