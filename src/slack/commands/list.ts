import { buildEventList } from "../../blocks/event-list.ts";
import { listEvents } from "../../domain/list.ts";
import type { CommandContext } from "./context.ts";

/** `/onair list`: the events On Air knows for the user, refreshed by GET, soonest first. */
export async function list(ctx: CommandContext): Promise<void> {
  const items = await listEvents(ctx.kit.deps, ctx.actor);
  const msg = buildEventList(items);
  await ctx.respond({ response_type: "ephemeral", text: msg.text, blocks: msg.blocks });
}
