import { openScheduleForm } from "../views/event-form.ts";
import type { CommandContext } from "./context.ts";

/** `/onair schedule`: the schedule form. */
export async function schedule(ctx: CommandContext): Promise<void> {
  await openScheduleForm(ctx.kit, ctx.client, ctx.actor, ctx.triggerId, ctx.channelId);
}
