import { openTokenForm } from "../views/token-form.ts";
import type { CommandContext } from "./context.ts";

/** `/onair token`: the token form (only for those the policy allows; the form checks). */
export async function token(ctx: CommandContext): Promise<void> {
  await openTokenForm(ctx.kit, ctx.client, ctx.actor, ctx.triggerId);
}
