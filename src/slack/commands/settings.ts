import { openSettings } from "../views/settings.ts";
import type { CommandContext } from "./context.ts";

/** `/onair settings`: admins only; the modal opens inside the trigger's 3 s. */
export async function settings(ctx: CommandContext): Promise<void> {
  await openSettings(ctx.kit, ctx.client, ctx.actor, ctx.triggerId, ctx.channelId);
}
