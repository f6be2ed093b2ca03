import type { Deps } from "../deps.ts";
import type { EventRecord, NoiseLevel } from "../store/index.ts";
import type { Actor } from "./directory.ts";
import { USER_ERROR_CODES, UserFacingError } from "./errors.ts";
import { manageableRecord } from "./event-record.ts";
import { subscribeChannel, unsubscribeChannel } from "./subscriptions.ts";

/**
 * Where live notices may go: a channel the actor is a member of (the channel where they typed the
 * command or pressed the button counts), or anywhere for a workspace admin. Without this a member
 * could have the bot join and post into any public channel (#announcements) in their name.
 */
export async function requireMayPostIn(
  actor: Actor,
  channel: string,
  fromChannel?: string,
): Promise<void> {
  if (channel === fromChannel) return;
  if (await actor.directory.isChannelMember(channel, actor.user)) return;
  if ((await actor.directory.profile(actor.user)).isAdmin) return;
  throw new UserFacingError(
    USER_ERROR_CODES.notAllowed,
    `You can only send live notices to a channel you're a member of. Join <#${channel}> first, or run the command there.`,
  );
}

export interface NotifyArgs {
  eventId: string;
  channel: string;
  /** Where the actor typed the command or pressed the button. */
  fromChannel?: string;
  noise?: NoiseLevel;
  remindersMin?: number[];
}

/** Sends the event's live card and attendee notices to a channel (organizer or admin only). */
export async function notifyChannel(
  deps: Deps,
  actor: Actor,
  args: NotifyArgs,
): Promise<EventRecord> {
  const record = await manageableRecord(deps, actor, args.eventId);
  await requireMayPostIn(actor, args.channel, args.fromChannel);
  await subscribeChannel(deps, {
    team: actor.team,
    eventId: record.eventId,
    channel: args.channel,
    user: actor.user,
    ...(args.noise ? { noise: args.noise } : {}),
    ...(args.remindersMin ? { remindersMin: args.remindersMin } : {}),
  });
  return record;
}

/**
 * Stops live notices for the event in one channel (organizer or admin only). On the last channel
 * the upstream webhooks are removed and the reminders deleted.
 */
export async function muteChannel(
  deps: Deps,
  actor: Actor,
  eventId: string,
  channel: string,
): Promise<{ record: EventRecord; muted: boolean }> {
  const record = await manageableRecord(deps, actor, eventId);
  const muted = await unsubscribeChannel(deps, actor.team, record.eventId, channel);
  return { record, muted };
}
