import { unlink as unlinkAccount } from "../../domain/link.ts";
import { userText } from "../../domain/text.ts";
import type { CommandContext } from "./context.ts";

/** `/onair unlink`: forgets the link and drops the user's cached upstream token. */
export async function unlink(ctx: CommandContext): Promise<void> {
  const gone = await unlinkAccount(ctx.kit.deps, ctx.actor);
  await ctx.reply(
    gone
      ? `I've forgotten the link to ${userText(gone.email, 200)}. Run \`/onair link\` whenever you want it back.`
      : "You're not linked to an events account, so there is nothing to forget.",
  );
}
