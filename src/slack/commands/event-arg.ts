import { resolveEvent } from "../../domain/resolve.ts";
import type { EventRecord } from "../../store/index.ts";
import type { CommandContext } from "./context.ts";
import { unescapeEntities } from "./text.ts";

/** The event a command names (by id or title, as typed: Slack's entities read back). */
export function eventArg(ctx: CommandContext, query: string, usage: string): Promise<EventRecord> {
  return resolveEvent(ctx.kit.deps, ctx.actor, unescapeEntities(query), usage);
}
