import type { Logger } from "../log.ts";
import {
  isPassingRefusal,
  isPlatformError,
  isRefusal,
  retryAfterMs,
  slackErrorName,
} from "../slack-errors.ts";
import type { PostKind } from "./live-model.ts";
import { LookupThrottled, NotOwner } from "./post-errors.ts";
import type { ScanProgress } from "./recover.ts";

/**
 * One exactly-once protocol for every kind of post (STYLE.md 15): mark, call, record. Before the
 * call the post's in-flight mark is saved; after Slack answers the result is recorded and the
 * mark cleared. Whoever finds a mark (the previous owner died, or the answer was lost) looks in
 * Slack first: found, it adopts what was posted; not found, it posts. A post kind is a small
 * spec (posts/*.ts) given to `postOnce`, never a copy of the protocol.
 */

/** What a lookup remembers between turns, per channel and kind (owned by the event's runner). */
export interface LookupMemory {
  /** Where a throttled lookup stopped, by `${channel}:${kind}`, so it resumes there. */
  readonly progress: Map<string, ScanProgress>;
  /** Per channel: since when its lookup has failed for passing reasons. */
  readonly failingSince: Map<string, number>;
}

/** What a post is handed by the event's runner: never the runner itself. */
export interface PostPort {
  readonly eventId: string;
  /** Saves the event's live model (fenced: a runner that lost its lease writes nothing). */
  save(): Promise<void>;
  /** Whether this process may still call Slack for the event (its lease holds). */
  mayCall(): boolean;
  readonly lookups: LookupMemory;
  readonly logger: Logger;
}

export interface PostSpec<Mark, Found, Answer> {
  readonly kind: PostKind;
  /** The in-flight mark a crash or a lost answer left, if any. */
  marked(): Mark | undefined;
  /** Looks in Slack for what the marked post became (undefined: not there). */
  find(mark: Mark, progress: ScanProgress): Promise<Found | undefined>;
  /** Records a post found in Slack; the protocol clears the mark and saves. */
  adopt(found: Found, mark: Mark): void;
  /**
   * Marked, and not found: post now ("post", the default) or leave it to the next turn, which
   * decides afresh ("later"). May throw LookupThrottled when what it looks for may still land.
   */
  notFound?(mark: Mark): "post" | "later";
  /** Sets the in-flight mark for a post going out at `now`. */
  mark(now: number): void;
  /** Drops the mark (a refusal: nothing was posted; or after the record). */
  unmark(): void;
  /**
   * The Slack call. A spec whose call does slow work first (drawing, uploading bytes) marks
   * itself through `markNow` just before the part that posts, so the mark's time is the post's.
   */
  call(markNow: () => Promise<void>): Promise<Answer>;
  /** Whether the spec marks itself inside `call` (see there). */
  readonly marksInCall?: boolean;
  /** Records what Slack answered. */
  record(answer: Answer): void;
}

/** What became of one turn of the protocol. */
export type PostOutcome = "adopted" | "posted" | "later";

/**
 * How long a lookup may keep failing for a passing reason (Slack's own trouble, a lost answer)
 * before the post goes out anyway. Time, not a count of tries: the lane waits longer each time
 * (1 s doubling to a minute), and a post after a short Slack incident must not be a duplicate.
 */
const LOOKUP_PATIENCE_MS = 10 * 60_000;

/** Mark, call, record; or, with a mark left over, look and adopt first. */
export async function postOnce<Mark, Found, Answer>(
  port: PostPort,
  ch: string,
  spec: PostSpec<Mark, Found, Answer>,
): Promise<PostOutcome> {
  const mark = spec.marked();
  if (mark !== undefined) {
    const found = await lookup(port, ch, spec.kind, (progress) => spec.find(mark, progress));
    if (found !== undefined) {
      spec.adopt(found, mark);
      spec.unmark();
      await port.save();
      return "adopted";
    }
    if ((spec.notFound?.(mark) ?? "post") === "later") {
      spec.unmark();
      await port.save();
      return "later";
    }
  }
  const markNow = async (): Promise<void> => {
    spec.mark(Date.now());
    await markSaved(port);
  };
  if (!spec.marksInCall) await markNow();
  const answer = await unlessRefused(spec.call(markNow), () => spec.unmark());
  spec.record(answer);
  spec.unmark();
  await port.save();
  return "posted";
}

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

/**
 * Stores an in-flight mark before its post. A runner whose lease lapsed stores nothing (its save
 * leaves the record to the new owner), so it must not post either.
 */
export async function markSaved(port: Pick<PostPort, "save" | "mayCall">): Promise<void> {
  await port.save();
  if (!port.mayCall()) throw new NotOwner();
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

/**
 * Looks in Slack for a post whose outcome was not recorded. Slack refusing (a missing scope,
 * the bot not in the channel) is logged and read as "not there": a duplicate is better than a
 * channel that never gets its posts. A passing failure (429, 5xx, a lost answer) is thrown so
 * the lane asks again later, for LOOKUP_PATIENCE_MS at most.
 */
export async function lookup<T>(
  port: PostPort,
  ch: string,
  what: PostKind,
  find: (progress: ScanProgress) => Promise<T | undefined>,
): Promise<T | undefined> {
  const { progress: scans, failingSince } = port.lookups;
  const key = `${ch}:${what}`;
  let progress = scans.get(key);
  if (!progress) {
    progress = { page: 0 };
    scans.set(key, progress);
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
    const since = failingSince.get(ch) ?? Date.now();
    failingSince.set(ch, since);
    // Slow down, a lost answer, a 5xx: ask again later (the lane waits), for a while at most,
    // so a channel never stalls for good behind a lookup that keeps failing.
    if (!refused && Date.now() - since < LOOKUP_PATIENCE_MS) throw err;
    port.logger.warn(
      {
        channel: ch,
        eventId: port.eventId,
        what,
        failingForMs: Date.now() - since,
        error: slackErrorName(err) ?? (err instanceof Error ? err.message : String(err)),
      },
      "live: could not look in Slack for a post that may have gone out; posting it again",
    );
  }
  failingSince.delete(ch);
  scans.delete(key);
  // The lookup may have taken a while: post only while this process still owns the event.
  if (!port.mayCall()) throw new NotOwner();
  return found;
}
