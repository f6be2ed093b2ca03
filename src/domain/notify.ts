import type { Deps } from "../deps.ts";
import type { EventRecord, NoiseLevel } from "../store/index.ts";
import type { Actor, ChannelReach } from "./directory.ts";
import { USER_ERROR_CODES, UserFacingError, userMessageOf } from "./errors.ts";
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

/** The live card's channel does not take the app's posts; `fieldText` is for under a form field. */
export class ChannelUnreachableError extends UserFacingError {
  constructor(
    readonly channel: string,
    readonly reach: Exclude<ChannelReach, "ok">,
    readonly fieldText: string,
    userMessage: string,
  ) {
    super(USER_ERROR_CODES.invalid, userMessage);
  }
}

/**
 * The channel must take the app's posts before anything is promised there: a private channel the
 * app was not invited to would otherwise read "Scheduled, its live card goes there" and get
 * nothing, and an archived one refuses every post.
 */
export async function requireAppCanPost(actor: Actor, channel: string): Promise<void> {
  const reach = await actor.directory.appReach(channel);
  if (reach === "ok") return;
  if (reach === "archived") {
    throw new ChannelUnreachableError(
      channel,
      reach,
      "This channel is archived, so it can't get the live card. Pick another channel.",
      `<#${channel}> is archived, so it can't get the live card. Pick another channel.`,
    );
  }
  throw new ChannelUnreachableError(
    channel,
    reach,
    "On Air isn't in this private channel, so it can't post there. Invite @On Air to it first (type /invite @On Air in the channel), then try again.",
    `On Air isn't in that private channel, so it can't post there. Invite @On Air to it first (type \`/invite @On Air\` in the channel), then try again.`,
  );
}

/** Both rules for where live notices may go: the actor may send them there, the app can post. */
export async function requireLiveChannel(
  actor: Actor,
  channel: string,
  fromChannel?: string,
): Promise<void> {
  // The app's view first: a private channel it is not in hides its members from the app too, so
  // "join it first" would be wrong there.
  await requireAppCanPost(actor, channel);
  await requireMayPostIn(actor, channel, fromChannel);
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
  await requireLiveChannel(actor, args.channel, args.fromChannel);
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

/** A refusal's words for under a form field: plain text, no channel link. */
export function fieldTextOf(err: unknown): string {
  return err instanceof ChannelUnreachableError ? err.fieldText : userMessageOf(err);
}
