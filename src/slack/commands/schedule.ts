import { openScheduleForm } from "../views/event-form.ts";
import type { CommandContext } from "./context.ts";
import { unescapeEntities } from "./text.ts";

/** `/onair schedule [when] [title]`: the schedule form, with what was typed filled in. */
export async function schedule(ctx: CommandContext): Promise<void> {
  await openScheduleForm(
    ctx.kit,
    ctx.client,
    ctx.actor,
    ctx.triggerId,
    ctx.channelId,
    unescapeEntities(ctx.args),
  );
}
