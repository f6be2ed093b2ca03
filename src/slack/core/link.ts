import type { Deps } from "../../deps.ts";
import { effectiveSettings, linkUser, relayCredentials, slackProfile } from "../access.ts";
import type { CommandContext } from "../router.ts";
import { userMessageOf } from "../router.ts";
import { CHECK_TOKEN_MS } from "./settings.ts";

/** `/onair link`: by the user's Slack e-mail; a plain answer when it is not an upstream user. */
export function linkCommand(deps: Deps) {
  return async (ctx: CommandContext): Promise<void> => {
    const link = await linkUser(deps, ctx.client, ctx.teamId, ctx.userId);
    await ctx.reply(
      `You're linked to the events account of ${link.email}. Try \`/onair schedule\` to schedule an event.`,
    );
  };
}

/** `/onair unlink`: forgets the link and drops the user's cached upstream token. */
export function unlinkCommand(deps: Deps) {
  return async (ctx: CommandContext): Promise<void> => {
    const link = await deps.store.users.get(ctx.teamId, ctx.userId);
    if (!link) {
      await ctx.reply("You're not linked to an events account, so there is nothing to forget.");
      return;
    }
    await deps.store.users.delete(ctx.teamId, ctx.userId);
    await deps.tokens.invalidateUser(ctx.teamId, link.email);
    await ctx.reply(
      `I've forgotten the link to ${link.email}. Run \`/onair link\` whenever you want it back.`,
    );
  };
}

/** `/onair whoami`: the linked account; for admins also the enterprise behind the relay. */
export function whoamiCommand(deps: Deps) {
  return async (ctx: CommandContext): Promise<void> => {
    const [link, profile] = await Promise.all([
      deps.store.users.get(ctx.teamId, ctx.userId),
      slackProfile(ctx.client, ctx.userId),
    ]);
    const lines = [
      link
        ? `You're linked to the events account of ${link.email} (user ${link.userId}, enterprise ${link.enterpriseId}).`
        : "You're not linked to an events account yet. Run `/onair link` to link by your Slack e-mail.",
    ];
    if (profile.isAdmin) lines.push(await enterpriseLine(deps, ctx.teamId));
    await ctx.reply(lines.join("\n"));
  };
}

/** The relay's enterprise self lookup with a one-minute token, in one line for an admin. */
async function enterpriseLine(deps: Deps, team: string): Promise<string> {
  try {
    const basic = relayCredentials(await effectiveSettings(deps, team));
    const token = await deps.relay.createAccessToken(
      { basic },
      { durationMs: CHECK_TOKEN_MS, clientName: "On Air whoami" },
    );
    const self = await deps.relay.getEnterpriseSelf(token.accessToken);
    return `Relay enterprise: ${self.label} (${self.name}), point of contact ${self.pointOfContact}.`;
  } catch (err) {
    deps.logger.info({ err }, "whoami: enterprise lookup failed");
    return `Relay enterprise: unknown. ${userMessageOf(err)}`;
  }
}
