import { openCancelConfirm } from "../views/cancel-confirm.ts";
import type { CommandContext } from "./context.ts";
import { eventArg } from "./event-arg.ts";

/** `/onair cancel <event>`: asks first (organizer or admin; the confirmation checks). */
export async function cancel(ctx: CommandContext): Promise<void> {
  const record = await eventArg(ctx, ctx.args, "/onair cancel <event>");
  await openCancelConfirm(
    ctx.kit,
    ctx.client,
    ctx.actor,
    ctx.triggerId,
    record.eventId,
    ctx.channelId,
  );
}
