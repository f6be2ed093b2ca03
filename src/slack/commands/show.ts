import { buildOrganizerDetails } from "../../blocks/organizer-details.ts";
import { showEvent } from "../../domain/list.ts";
import type { CommandContext } from "./context.ts";
import { eventArg } from "./event-arg.ts";

/** `/onair show <event>`: everything, organizer details included; only the organizer sees it. */
export async function show(ctx: CommandContext): Promise<void> {
  const record = await eventArg(ctx, ctx.args, "/onair show <event>");
  const { event, live } = await showEvent(ctx.kit.deps, ctx.actor, record.eventId);
  const msg = buildOrganizerDetails(event, "Here is your event (only you can see this).", {
    ...(live ? { live } : {}),
    description: true,
  });
  await ctx.respond({ response_type: "ephemeral", text: msg.text, blocks: msg.blocks });
}
