import { buildTokenList } from "../../blocks/tokens.ts";
import { listTokens } from "../../domain/tokens.ts";
import type { CommandContext } from "./context.ts";

/** `/onair tokens`: the enterprise's live tokens, masked (for those who may mint). */
export async function tokens(ctx: CommandContext): Promise<void> {
  const list = await listTokens(ctx.kit.deps, ctx.actor);
  const msg = buildTokenList(list, ctx.kit.deps.now());
  await ctx.respond({ response_type: "ephemeral", text: msg.text, blocks: msg.blocks });
}
