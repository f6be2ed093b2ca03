import { NO_UNFURL } from "../blocks/kit.ts";
import { eventOf } from "../domain/subscription.ts";
import { userText } from "../domain/text.ts";
import type { EventRun } from "./event-run.ts";

/** Slack's refusals of a channel's posts, in words an organizer can act on. */
const WHY: Readonly<Record<string, string>> = {
  is_archived: "the channel is archived",
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

/**
 * Tells the event's organizer, once, that a channel stopped getting the live card and why, and
 * what brings it back. Best effort: a DM that fails is logged, never retried (the channel's own
 * state already says it is blocked).
 */
export async function tellOrganizerRefused(
  run: EventRun,
  channel: string,
  error: string,
): Promise<void> {
  // Only a refusal the organizer (or a channel admin) can fix: not an uninstalled workspace
  // (nothing can be sent), nor the app's own mistake (invalid_blocks, …), which is logged.
  const why = Object.hasOwn(WHY, error) ? WHY[error] : undefined;
  if (why === undefined) return;
  const { deps } = run.engine;
  try {
    const record = await deps.store.events.get(run.team, run.eventId);
    if (!record || record.cancelled) return;
    const event = run.sub ? eventOf(run.sub.sub) : undefined;
    const title = event ? `*${userText(event.title, 200)}*` : "your event";
    const client = await run.client();
    await client.chat.postMessage({
      ...NO_UNFURL,
      channel: record.organizer,
      text: `:warning: <#${channel}> stopped getting the live card of ${title}: ${why}. Once that is fixed, run \`/onair notify ${userText(run.eventId, 80)}\` in the channel to bring it back.`,
    });
  } catch (err) {
    deps.logger.warn(
      { err, channel, eventId: run.eventId },
      "live: could not tell the organizer that a channel refuses posts",
    );
  }
}
