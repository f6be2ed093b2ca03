import { link as linkAccount } from "../../domain/link.ts";
import { userText } from "../../domain/text.ts";
import type { CommandContext } from "./context.ts";

/** `/onair link`: by the user's Slack e-mail. */
export async function link(ctx: CommandContext): Promise<void> {
  const linked = await linkAccount(ctx.kit.deps, ctx.actor);
  await ctx.reply(
    `You're linked to the events account of ${userText(linked.email, 200)}. Try \`/onair schedule\` to schedule an event.`,
  );
}
