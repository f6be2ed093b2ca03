import type { WebClient } from "@slack/web-api";
import { noiseOf } from "../domain/subscription.ts";
import { slackErrorName } from "../slack-errors.ts";
import { type RenderedCard, renderCard } from "./card.ts";
import { digestText } from "./digest.ts";
import type { EventRun } from "./event-run.ts";
import type { ChannelPosting } from "./live-record.ts";
import type { PostKind } from "./planner.ts";
import { methodCall, postOnce } from "./post-once.ts";
import { firstCard } from "./posts/card.ts";
import type { PostContext } from "./posts/context.ts";
import { counter } from "./posts/counter.ts";
import { digest } from "./posts/digest.ts";
import { reminder, SKIPPED } from "./posts/reminder.ts";
import { deleteScheduled, forgetPosted, nextReminderStep, wantedReminders } from "./reminders.ts";
import { postReport } from "./report-post.ts";

/**
 * What a lane's turn posts: the kind the planner chose, through the one exactly-once protocol
 * (post-once.ts) with that kind's spec (posts/*.ts). Card updates and a reminder's deletion are
 * idempotent and need no mark.
 */

/**
 * One step toward the reminders the subscription wants in this channel: settle a mark whose
 * answer was lost, delete one nobody wants, or schedule a missing one.
 */
async function keepReminders(run: EventRun, cx: PostContext): Promise<void> {
  const { ch, c, client } = cx;
  const now = Date.now();
  const stillWanted = (key: string) =>
    wantedReminders(run.sub?.sub, ch, now).find((w) => w.key === key);
  if (c.reminderPosting) {
    await postOnce(run.port, ch, reminder(cx, undefined, stillWanted));
    return;
  }
  forgetPosted(c, now);
  const step = nextReminderStep(c, wantedReminders(run.sub?.sub, ch, now), now);
  if (!step) return;
  if (step.op === "delete") {
    if (!step.reminder.id.startsWith(SKIPPED)) {
      await methodCall(deleteScheduled(client, ch, step.reminder.id));
    }
    c.reminders = (c.reminders ?? []).filter((r) => r.id !== step.reminder.id);
    await run.save();
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

export async function publish(run: EventRun, ch: string, kind: PostKind): Promise<void> {
  const sub = run.sub?.sub;
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
  const muted = kind === "card" ? run.mutedCard(ch) : undefined;
  if (muted && c.cardTs) {
    await updateCard(client, ch, c, muted);
    await run.save();
    return;
  }
  if (!sub) return;
  if (kind === "card") {
    const card = renderCard(sub, run.live, ch);
    if (!card) return;
    if (!c.cardTs) {
      await postOnce(run.port, ch, firstCard(cx, card));
      if (c.cardTs) void run.mirrorCard(ch, c.cardTs);
      return;
    }
    // Someone deleted the card: it is forgotten, and a new one is posted rather than keep failing.
    await updateCard(client, ch, c, card);
    await run.save();
    return;
  }
  if (!c.cardTs) return;
  const cardTs = c.cardTs;
  if (kind === "counter") {
    const text = run.counterText();
    if (c.counterTs) {
      await client.chat.update({ channel: ch, ts: c.counterTs, text });
      c.counterHash = text;
      await run.save();
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
        { present: run.live.current()?.present ?? 0 },
        await run.emailsShown(),
      ),
    ),
  );
}
