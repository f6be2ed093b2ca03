import type { WebClient } from "@slack/web-api";
import { NO_UNFURL, verbatimSections } from "../blocks/kit.ts";
import { noiseOf } from "../domain/subscription.ts";
import {
  isPassingRefusal,
  isPlatformError,
  isRefusal,
  retryAfterMs,
  slackErrorName,
} from "../slack-errors.ts";
import { type RenderedCard, renderCard } from "./card.ts";
import { digestText, type Pending, subtract } from "./digest.ts";
import type { EventRun } from "./event-run.ts";
import type { ChannelPosting } from "./live-record.ts";
import type { PostKind } from "./planner.ts";
import { LookupThrottled, NotOwner } from "./post-errors.ts";
import {
  cardMetadata,
  counterMetadata,
  digestMetadata,
  findCard,
  findCounter,
  findDigest,
  type ScanProgress,
} from "./recover.ts";
import {
  deleteScheduled,
  findScheduled,
  forgetPosted,
  nextReminderStep,
  wantedReminders,
} from "./reminders.ts";
import { postReport } from "./report-post.ts";

/**
 * The posting protocol, exactly once across a crash. Before the first card of a channel, a
 * digest or the thread's running count, the run stores an in-flight mark and posts with metadata
 * naming it; after Slack answers it records the result and clears the mark. Whoever finds a mark
 * (the previous owner died, or the answer was lost) looks in Slack first (recover.ts): found, it
 * adopts the message; not found, it posts. Card updates are idempotent and need no mark.
 */

/**
 * How long a lookup may keep failing for a passing reason (Slack's own trouble, a lost answer)
 * before the post goes out anyway. Time, not a count of tries: the lane waits longer each time
 * (1 s doubling to a minute), and a post after a short Slack incident must not be a duplicate.
 */
const LOOKUP_PATIENCE_MS = 10 * 60_000;

/**
 * Awaits a post; when Slack answered with a refusal (an error or a 429) the post surely did not
 * go out, so its in-flight mark is dropped: no lookup is needed before the next try. A lost
 * answer (network, timeout) keeps the mark.
 */
export async function unlessRefused<T>(call: Promise<T>, notPosted: () => void): Promise<T> {
  try {
    return await call;
  } catch (err) {
    if (isRefusal(err) || err instanceof LookupThrottled) notPosted();
    throw err;
  }
}

function digested(c: ChannelPosting, taken: Pending): void {
  c.pending = subtract(c.pending, taken);
  delete c.digestPosting;
  c.lastThreadAt = Date.now();
}

/**
 * Stores an in-flight mark before its post. A run whose lease lapsed stores nothing (save()
 * leaves the record to the new owner), so it must not post either.
 */
export async function markSaved(run: EventRun): Promise<void> {
  await run.save();
  if (!run.mayCall()) throw new NotOwner();
}

/**
 * Not a post to the channel: a method limited per workspace (history, replies, the scheduled
 * messages). Its 429 makes only this lane wait; the channel's pace is not held for it.
 */
export async function methodCall<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    const wait = retryAfterMs(err);
    if (wait !== undefined) throw new LookupThrottled(wait);
    throw err;
  }
}

/** A reminder Slack would not hold, kept in the list so it is not asked for again. */
const SKIPPED = "skipped:";
/**
 * chat.scheduleMessage refusals about this one reminder, not the channel: its time (too near or
 * too far by Slack's clock), or Slack's cap of 30 scheduled messages within 5 minutes in one
 * channel (restricted_too_many: many events starting together). The card's lane goes on.
 */
const NOT_HELD = new Set(["invalid_time", "time_in_past", "time_too_far", "restricted_too_many"]);

/**
 * One step toward the reminders the subscription wants in this channel: adopt one whose
 * scheduling answer was lost, delete one nobody wants, or schedule a missing one (marked in
 * flight first, like posts, so a crash right after the call adopts it instead of scheduling it
 * twice).
 */
async function keepReminders(run: EventRun, ch: string, client: WebClient): Promise<void> {
  const c = run.channel(ch);
  const now = Date.now();
  const marked = c.reminderPosting;
  if (marked) {
    const wanted = wantedReminders(run.sub?.sub, ch, now).find((w) => w.key === marked.key);
    const id = wanted
      ? await lookup(run, ch, "reminder", () => methodCall(findScheduled(client, ch, wanted)))
      : undefined;
    if (id) c.reminders = [...(c.reminders ?? []), { id, postAt: marked.postAt, key: marked.key }];
    delete c.reminderPosting;
    await run.save();
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
  const { wanted } = step;
  c.reminderPosting = { key: wanted.key, postAt: wanted.postAt, at: now };
  await markSaved(run);
  let id: string | undefined;
  try {
    const res = await unlessRefused(
      methodCall(
        client.chat.scheduleMessage({
          channel: ch,
          post_at: wanted.postAt,
          text: wanted.text,
          blocks: verbatimSections(wanted.text),
          ...NO_UNFURL,
        }),
      ),
      () => delete c.reminderPosting,
    );
    id = res.scheduled_message_id;
  } catch (err) {
    // Slack will not hold this one (see NOT_HELD): the channel is fine, this reminder is
    // skipped rather than tried again and again.
    if (!NOT_HELD.has(slackErrorName(err) ?? "")) throw err;
    run.engine.deps.logger.warn(
      { channel: ch, eventId: run.eventId, postAt: wanted.postAt, error: slackErrorName(err) },
      "live: Slack would not schedule a reminder at that time; skipped",
    );
    id = `${SKIPPED}${wanted.key}`;
  }
  delete c.reminderPosting;
  if (id) c.reminders = [...(c.reminders ?? []), { id, postAt: wanted.postAt, key: wanted.key }];
  await run.save();
}

/**
 * Looks in Slack for a post whose outcome was not recorded. Slack refusing (a missing scope,
 * the bot not in the channel) is logged and read as "not there": a duplicate is better than a
 * channel that never gets its posts. A passing failure (429, 5xx, a lost answer) is thrown so
 * the lane asks again later, for LOOKUP_PATIENCE_MS at most.
 */
export async function lookup<T>(
  run: EventRun,
  ch: string,
  what: PostKind,
  find: (progress: ScanProgress) => Promise<T | undefined>,
): Promise<T | undefined> {
  const key = `${ch}:${what}`;
  let progress = run.lookupProgress.get(key);
  if (!progress) {
    progress = { page: 0 };
    run.lookupProgress.set(key, progress);
  }
  let found: T | undefined;
  try {
    found = await find(progress);
  } catch (err) {
    if (err instanceof LookupThrottled) throw err;
    const wait = retryAfterMs(err);
    if (wait !== undefined) throw new LookupThrottled(wait);
    // A refusal that passes (a limit, Slack's own trouble) is asked again like a lost answer.
    const refused = isPlatformError(err) && !isPassingRefusal(err);
    const since = run.lookupFailingSince.get(ch) ?? Date.now();
    run.lookupFailingSince.set(ch, since);
    // Slow down, a lost answer, a 5xx: ask again later (the lane waits), for a while at most,
    // so a channel never stalls for good behind a lookup that keeps failing.
    if (!refused && Date.now() - since < LOOKUP_PATIENCE_MS) throw err;
    run.engine.deps.logger.warn(
      {
        channel: ch,
        eventId: run.eventId,
        what,
        failingForMs: Date.now() - since,
        error: slackErrorName(err) ?? (err instanceof Error ? err.message : String(err)),
      },
      "live: could not look in Slack for a post that may have gone out; posting it again",
    );
  }
  run.lookupFailingSince.delete(ch);
  run.lookupProgress.delete(key);
  // The lookup may have taken a while: post only while this process still owns the event.
  if (!run.mayCall()) throw new NotOwner();
  return found;
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
  const client = await run.client();
  if (kind === "reminder") {
    await keepReminders(run, ch, client);
    return;
  }
  if (kind === "report") {
    await postReport(run, ch, client);
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
      const since = c.cardPosting;
      const found =
        since === undefined
          ? undefined
          : await lookup(run, ch, "card", (progress) =>
              findCard(client, ch, run.eventId, since, progress),
            );
      if (found) {
        // The previous post went out; its answer was lost (crash, timeout): adopt it.
        c.cardTs = found.ts;
        if (found.hash) c.cardHash = found.hash;
        else delete c.cardHash;
      } else {
        c.cardPosting = Date.now();
        await markSaved(run);
        const res = await unlessRefused(
          client.chat.postMessage({
            channel: ch,
            text: card.text,
            blocks: card.blocks,
            ...NO_UNFURL,
            metadata: cardMetadata(run.eventId, card.hash),
          }),
          () => delete c.cardPosting,
        );
        if (!res.ts) throw new Error("chat.postMessage answered without a ts");
        c.cardTs = res.ts;
        c.cardHash = card.hash;
      }
      delete c.cardPosting;
      // A new card has a new thread: whatever refused the old one does not hold for it.
      delete c.threadBlocked;
      await run.save();
      void run.mirrorCard(ch, c.cardTs);
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
    const since = c.counterPosting;
    const found =
      since === undefined
        ? undefined
        : await lookup(run, ch, "counter", (progress) =>
            findCounter(client, ch, cardTs, run.eventId, since, progress),
          );
    if (found) {
      // Posted before the answer was lost: adopt it; the next turn brings its text up to date.
      c.counterTs = found;
      delete c.counterHash;
    } else {
      c.counterPosting = Date.now();
      await markSaved(run);
      const res = await unlessRefused(
        client.chat.postMessage({
          channel: ch,
          thread_ts: cardTs,
          text,
          ...NO_UNFURL,
          metadata: counterMetadata(run.eventId),
        }),
        () => delete c.counterPosting,
      );
      if (res.ts) c.counterTs = res.ts;
      c.counterHash = text;
    }
    delete c.counterPosting;
    await run.save();
    return;
  }
  const inflight = c.digestPosting;
  if (inflight) {
    const found = await lookup(run, ch, "digest", (progress) =>
      findDigest(client, ch, cardTs, run.eventId, inflight.seq, inflight.at, progress),
    );
    if (found) {
      // Posted before the answer was lost: take out what it took, post nothing.
      digested(c, inflight.taken);
      await run.save();
      return;
    }
  }
  // Not posted (or not found): the notices it would have taken are still pending; the same
  // seq goes out with everything pending now.
  const taken: Pending = structuredClone(c.pending);
  const text = digestText(
    noiseOf(sub, ch),
    taken,
    { present: run.live.current()?.present ?? 0 },
    await run.emailsShown(),
  );
  const seq = inflight?.seq ?? c.seq + 1;
  c.seq = seq;
  c.digestPosting = { seq, taken, at: Date.now() };
  await markSaved(run);
  await unlessRefused(
    client.chat.postMessage({
      channel: ch,
      thread_ts: cardTs,
      text,
      // Attendees' names are outside text: shown verbatim, never unfurled.
      blocks: verbatimSections(text),
      ...NO_UNFURL,
      metadata: digestMetadata(run.eventId, seq, taken),
    }),
    () => delete c.digestPosting,
  );
  digested(c, taken);
  await run.save();
}
