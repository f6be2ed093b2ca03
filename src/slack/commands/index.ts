import type { AllMiddlewareArgs, App, SlackCommandMiddlewareArgs } from "@slack/bolt";
import { COMMAND, type Subcommand } from "../../ids.ts";
import { reportFailure } from "../failure.ts";
import { actorOf, type ListenerKit } from "../kit.ts";
import { cancel } from "./cancel.ts";
import type { CommandContext, CommandHandler } from "./context.ts";
import { edit } from "./edit.ts";
import { help, helpText } from "./help.ts";
import { link } from "./link.ts";
import { list } from "./list.ts";
import { mute } from "./mute.ts";
import { notify } from "./notify.ts";
import { report } from "./report.ts";
import { schedule } from "./schedule.ts";
import { settings } from "./settings.ts";
import { show } from "./show.ts";
import { splitCommand, unescapeEntities } from "./text.ts";
import { token } from "./token.ts";
import { tokens } from "./tokens.ts";
import { unlink } from "./unlink.ts";
import { whoami } from "./whoami.ts";

/** One handler per subcommand, each in its own file. */
export const HANDLERS: Readonly<Record<Subcommand, CommandHandler>> = {
  help,
  schedule,
  edit,
  cancel,
  list,
  show,
  notify,
  mute,
  link,
  unlink,
  whoami,
  token,
  tokens,
  settings,
  report,
};

function isSubcommand(word: string): word is Subcommand {
  return Object.hasOwn(HANDLERS, word);
}

/**
 * The single `/onair` listener: acks at once (Slack's 3 s are the user's patience), then
 * dispatches by the first word. Anything unknown gets help.
 */
export function registerCommands(app: App, kit: ListenerKit): void {
  const { deps } = kit;
  app.command(
    COMMAND,
    async ({
      ack,
      command,
      client,
      respond,
      context,
    }: SlackCommandMiddlewareArgs & AllMiddlewareArgs) => {
      const started = performance.now();
      await ack();
      deps.metrics.slackAckSeconds.observe(
        { kind: "command" },
        (performance.now() - started) / 1000,
      );
      const { first, rest } = splitCommand(command.text ?? "");
      const reply = async (text: string) => {
        await respond({ response_type: "ephemeral", text });
      };
      if (!isSubcommand(first)) {
        await reply(first === "" ? helpText() : helpText(unescapeEntities(first)));
        return;
      }
      try {
        const ctx: CommandContext = {
          kit,
          actor: actorOf(kit, context, command.user_id, client, command.team_id),
          subcommand: first,
          args: rest,
          channelId: command.channel_id,
          triggerId: command.trigger_id,
          client,
          respond,
          reply,
        };
        await HANDLERS[first](ctx);
      } catch (err) {
        await reportFailure(deps, `/onair ${first}`, err, reply);
      }
    },
  );
}
