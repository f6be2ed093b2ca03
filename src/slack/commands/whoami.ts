import { whoami as who } from "../../domain/link.ts";
import { userText } from "../../domain/text.ts";
import type { CommandContext } from "./context.ts";

/** `/onair whoami`: the linked account (nothing is minted or looked up upstream). */
export async function whoami(ctx: CommandContext): Promise<void> {
  const { link, isAdmin } = await who(ctx.kit.deps, ctx.actor);
  const lines = [
    link
      ? `You're linked to the events account of ${userText(link.email, 200)} (user ${link.userId}, enterprise ${link.enterpriseId}).`
      : "You're not linked to an events account yet. Run `/onair link` to link by your Slack e-mail.",
  ];
  if (isAdmin) {
    lines.push(
      "As an admin, `/onair settings` → Check shows which relay enterprise and events app On Air uses.",
    );
  }
  await ctx.reply(lines.join("\n"));
}
