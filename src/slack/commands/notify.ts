import { NOISE_WORDS } from "../../blocks/noise.ts";
import { notifyChannel } from "../../domain/notify.ts";
import { userText } from "../../domain/text.ts";
import type { CommandContext } from "./context.ts";
import { eventArg } from "./event-arg.ts";
import { parseNotifyArgs } from "./notify-args.ts";

/**
 * `/onair notify <event> [#channel] [noise]`: the event's live card and attendee notices go to
 * the channel (here when none is named). Organizer or admin, into a channel the actor is in.
 */
export async function notify(ctx: CommandContext): Promise<void> {
  const args = parseNotifyArgs(ctx.args);
  const usage = "/onair notify <event> [#channel]";
  const found = await eventArg(ctx, args.query, usage);
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
