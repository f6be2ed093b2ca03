import type { WebClient } from "@slack/web-api";
import { NO_UNFURL, shownAsWritten } from "../blocks/kit.ts";
import type { LiveSubscription } from "../domain/subscription.ts";
import { eventOf } from "../domain/subscription.ts";
import { userText } from "../domain/text.ts";
import type { Logger } from "../log.ts";
import type { Store } from "../store/index.ts";
import { emptyPending } from "./digest.ts";
import type { PostKind } from "./live-model.ts";
import type { ChannelPosting } from "./live-record.ts";

/** What a refusal's bookkeeping is handed by the event's runner (event-run.ts). */
export interface RefusalPort {
  readonly team: string;
  readonly eventId: string;
  readonly sub: LiveSubscription | undefined;
  /** The channel's posting state, made when missing. */
  channel(ch: string): ChannelPosting;
  save(): Promise<void>;
  client(): Promise<WebClient>;
  readonly store: Pick<Store, "events">;
  readonly logger: Logger;
}

/** Slack's refusals of a channel's posts, in words an organizer can act on. */
const WHY: Readonly<Record<string, string>> = {
  is_archived: "the channel is archived",
  // chat.update's word for it: the card was there before the channel was archived.
  is_inactive: "the channel is archived",
  posting_to_channel_denied:
    "a channel setting keeps apps from posting there, or an admin locked the live card's thread",
  app_access_restricted: "a workspace admin restricted what On Air may do",
  ekm_access_denied:
    "the workspace's encryption key settings keep On Air out (an admin can change that)",
  channel_not_found: "On Air can't see the channel (a private channel must invite it first)",
  not_in_channel: "On Air isn't in the channel (invite it with `/invite`)",
  restricted_action: "a workspace setting keeps apps from posting there",
  restricted_action_read_only_channel:
    "only some people may post in the channel, and On Air isn't one of them",
  restricted_action_thread_only_channel:
    "the channel takes replies in threads only, and the live card is a new message",
  restricted_action_thread_locked: "an admin locked the live card's thread",
  restricted_action_non_threadable_channel:
    "the channel takes no threads, and the digests are a thread",
  missing_scope: "On Air's install lacks a permission it needs there (reinstall it)",
};

/** Refusals of the card's thread only: the card itself can still be kept up to date. */
const THREAD_REFUSALS = new Set([
  "restricted_action_thread_locked",
  "restricted_action_non_threadable_channel",
]);

/** What a refusal stops: the channel's posts, or (a thread post refused for its thread) the thread's. */
export function refusedPart(kind: PostKind, error: string): "card" | "thread" {
  const inThread = kind === "digest" || kind === "counter" || kind === "report" || kind === "call";
  // files.completeUploadExternal has one word for every posting limit, a locked thread included:
  // the report, a thread post, stops the thread's posts only (the card's own refusal, if any,
  // stops the rest).
  const threadOnly =
    THREAD_REFUSALS.has(error) || (kind === "report" && error === "posting_to_channel_denied");
  return inThread && threadOnly ? "thread" : "card";
}

/**
 * Stops what Slack refuses in a channel until someone notifies it again: every post there, or
 * (part "thread") the thread's digests, counter and report while the card goes on. Notices
 * waiting for it are dropped; the organizer is told.
 */
export async function blockPosts(
  run: RefusalPort,
  ch: string,
  error: string,
  part: "card" | "thread",
): Promise<void> {
  const c = run.channel(ch);
  if (part === "card") c.blocked = error;
  else c.threadBlocked = error;
  c.pending = emptyPending();
  delete c.digestPosting;
  delete c.counterPosting;
  run.logger.warn(
    { channel: ch, error, eventId: run.eventId, part },
    "live: Slack refuses posts to this channel; they stop until it is notified again",
  );
  await run.save();
  await tellOrganizerRefused(run, ch, error, part);
}

/** Notified again: whatever Slack refused is tried again. */
export function unblock(c: ChannelPosting): void {
  delete c.blocked;
  delete c.threadBlocked;
}

/**
 * Tells the event's organizer, once, that a channel stopped getting the live card (or its
 * thread) and why, and what brings it back. Best effort: a DM that fails is logged, never
 * retried (the channel's own state already says it is blocked).
 */
async function tellOrganizerRefused(
  run: RefusalPort,
  channel: string,
  error: string,
  part: "card" | "thread",
): Promise<void> {
  // Only a refusal the organizer (or a channel admin) can fix: not an uninstalled workspace
  // (nothing can be sent), nor the app's own mistake (invalid_blocks, …), which is logged.
  const why = Object.hasOwn(WHY, error) ? WHY[error] : undefined;
  if (why === undefined) return;
  const deps = run;
  try {
    const record = await deps.store.events.get(run.team, run.eventId);
    if (!record || record.cancelled) return;
    const event = run.sub ? eventOf(run.sub) : undefined;
    const title = event ? `*${userText(event.title, 200)}*` : "your event";
    const client = await run.client();
    const stopped =
      part === "card"
        ? `<#${channel}> stopped getting the live card of ${title}`
        : `The live card of ${title} in <#${channel}> stays up to date, but its thread stopped getting join and leave notices and the attendance report`;
    const text = `:warning: ${stopped}: ${why}. Once that is fixed, run \`/onair notify ${userText(run.eventId, 80)}\` in the channel to bring it back.`;
    // Shown as written (the title is outside text: a URL in it stays text), with the same text
    // as the notification's fallback.
    await client.chat.postMessage({
      ...NO_UNFURL,
      channel: record.organizer,
      text,
      blocks: [{ type: "section", text: shownAsWritten(text) }],
    });
  } catch (err) {
    deps.logger.warn(
      { err, channel, eventId: run.eventId },
      "live: could not tell the organizer that a channel refuses posts",
    );
  }
}
