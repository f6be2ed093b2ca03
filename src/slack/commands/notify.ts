import { NOISE_WORDS, unknownNoiseText } from "../../blocks/noise.ts";
import { USER_ERROR_CODES, UserFacingError } from "../../domain/errors.ts";
import { notifyChannel } from "../../domain/notify.ts";
import { userText } from "../../domain/text.ts";
import type { CommandContext } from "./context.ts";
import { eventArg } from "./event-arg.ts";
import { parseNotifyArgs } from "./notify-args.ts";
import { words } from "./text.ts";

function isNotFound(err: unknown): boolean {
  return err instanceof UserFacingError && err.code === USER_ERROR_CODES.notFound;
}

/**
 * `/onair notify <event> [#channel] [noise]`: the event's live card and attendee notices go to
 * the channel (here when none is named). Organizer or admin, into a channel the actor is in.
 */
export async function notify(ctx: CommandContext): Promise<void> {
  const args = parseNotifyArgs(ctx.args);
  const usage = "/onair notify <event> [#channel] [off|counter|digest|every]";
  const found = await eventArg(ctx, args.query, usage).catch(async (err: unknown) => {
    // "<event> loud #general": the event's name with one word too many, and that word where a
    // noise level goes. Said as such when the name without it is an event.
    const last = words(args.query).at(-1);
    const shorter = args.query.slice(0, args.query.lastIndexOf(last ?? "")).trim();
    if (args.noise || !last || shorter === "" || !isNotFound(err)) throw err;
    const named = await eventArg(ctx, shorter, usage).catch(() => undefined);
    if (!named) throw err;
    throw new UserFacingError(USER_ERROR_CODES.invalid, unknownNoiseText(userText(last, 40)));
  });
  const channel = args.channel ?? ctx.channelId;
  const record = await notifyChannel(ctx.kit.deps, ctx.actor, {
    eventId: found.eventId,
    channel,
    fromChannel: ctx.channelId,
    ...(args.noise ? { noise: args.noise } : {}),
  });
  const title = userText(record.title ?? record.eventId, 150);
  const noise = args.noise ? ` Attendee notices: ${NOISE_WORDS[args.noise]}.` : "";
  await ctx.reply(
    `Live notices for *${title}* now go to <#${channel}>.${noise} To stop them there, run \`/onair mute ${userText(record.eventId, 80)}\` in that channel.`,
  );
}
