import { openEditForm } from "../views/event-form.ts";
import type { CommandContext } from "./context.ts";
import { eventArg } from "./event-arg.ts";

/** `/onair edit <event>`: the edit form (organizer or admin; the form checks). */
export async function edit(ctx: CommandContext): Promise<void> {
  const record = await eventArg(ctx, ctx.args, "/onair edit <event>");
  await openEditForm(ctx.kit, ctx.client, ctx.actor, ctx.triggerId, record.eventId, ctx.channelId);
}
