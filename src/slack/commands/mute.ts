import { muteChannel } from "../../domain/notify.ts";
import { userText } from "../../domain/text.ts";
import type { CommandContext } from "./context.ts";
import { eventArg } from "./event-arg.ts";
import { parseNotifyArgs } from "./notify-args.ts";

/** `/onair mute <event> [#channel]`: live notices off in that channel (organizer or admin). */
export async function mute(ctx: CommandContext): Promise<void> {
  const args = parseNotifyArgs(ctx.args);
  const found = await eventArg(ctx, args.query, "/onair mute <event>");
  const channel = args.channel ?? ctx.channelId;
  const { record, muted } = await muteChannel(ctx.kit.deps, ctx.actor, found.eventId, channel);
  const title = userText(record.title ?? record.eventId, 150);
  await ctx.reply(
    muted
      ? `Live notices for *${title}* are off in <#${channel}>. Run \`/onair notify ${userText(record.eventId, 80)}\` here to turn them back on.`
      : `*${title}* sends no live notices to <#${channel}>, so there was nothing to mute.`,
  );
}
