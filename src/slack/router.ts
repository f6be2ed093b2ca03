import type { AllMiddlewareArgs, App, RespondFn, SlackCommandMiddlewareArgs } from "@slack/bolt";
import type { WebClient } from "@slack/web-api";
import type { Deps } from "../deps.ts";
import { COMMAND, type Subcommand } from "./ids.ts";

export interface CommandContext {
  readonly deps: Deps;
  readonly subcommand: Subcommand;
  /** The text after the subcommand, trimmed. */
  readonly args: string;
  readonly teamId: string;
  readonly enterpriseId: string | undefined;
  readonly userId: string;
  readonly channelId: string;
  readonly triggerId: string;
  /** The interactive client (views.open, chat.postEphemeral); never used for bulk posting. */
  readonly client: WebClient;
  readonly respond: RespondFn;
  /** Answers the user privately, in one plain sentence and a next step. */
  reply(text: string): Promise<void>;
}

export type CommandHandler = (ctx: CommandContext) => Promise<void>;

/** One line each, shown by `/onair help` and for anything unknown. */
export const HELP: Readonly<Record<Subcommand, string>> = {
  help: "show this list",
  schedule: "schedule a live event (opens a form)",
  edit: "`edit <event>`: change an event you organize",
  cancel: "`cancel <event>`: cancel an event (asks first)",
  list: "your upcoming events",
  show: "`show <event>`: an event's details and links",
  notify:
    "`notify <event> [#channel]`: post the event's live card and attendee activity to a channel",
  mute: "`mute <event>`: stop live notices for an event in this channel",
  link: "link your Slack account to your events account (by your Slack e-mail)",
  unlink: "forget that link",
  whoami: "which events account you are linked to",
  token: "mint a relay access token (opens a form)",
  tokens: "list your enterprise's live relay tokens",
  settings: "admins: events app and relay credentials, policy, audit channel",
};

export function helpText(unknown?: string): string {
  const head = unknown
    ? `I don't know \`${COMMAND} ${unknown.slice(0, 40)}\`. Here is what I can do:`
    : `*On Air* — schedule live events and watch them go live. Commands:`;
  const lines = (Object.keys(HELP) as Subcommand[]).map(
    (s) => `• \`${COMMAND} ${s}\` — ${HELP[s]}`,
  );
  return [head, ...lines].join("\n");
}

export interface CommandRouter {
  on(subcommand: Subcommand, handler: CommandHandler): void;
  handled(): Subcommand[];
}

/**
 * The single `/onair` listener: acks at once (Slack's 3 s are the user's patience), then dispatches
 * by the first word. Feature areas register their subcommands; anything unknown gets help.
 */
export function registerCommandRouter(app: App, deps: Deps): CommandRouter {
  const handlers = new Map<Subcommand, CommandHandler>();
  handlers.set("help", async (ctx) => ctx.reply(helpText()));

  app.command(COMMAND, async (args: SlackCommandMiddlewareArgs & AllMiddlewareArgs) => {
    const started = performance.now();
    await args.ack();
    deps.metrics.slackAckSeconds.observe({ kind: "command" }, (performance.now() - started) / 1000);
    const { command, client, respond } = args;
    const text = (command.text ?? "").trim();
    const [first = "", ...rest] = text.split(/\s+/);
    const word = first.toLowerCase();
    const handler = handlers.get(word as Subcommand);
    const reply = async (message: string) => {
      await respond({ response_type: "ephemeral", text: message });
    };
    if (!handler || word === "") {
      await reply(word === "" ? helpText() : helpText(word));
      return;
    }
    const ctx: CommandContext = {
      deps,
      subcommand: word as Subcommand,
      args: rest.join(" ").trim(),
      teamId: command.team_id,
      enterpriseId: command.enterprise_id,
      userId: command.user_id,
      channelId: command.channel_id,
      triggerId: command.trigger_id,
      client,
      respond,
      reply,
    };
    try {
      await handler(ctx);
    } catch (err) {
      deps.logger.error({ err, subcommand: word }, "command failed");
      await reply(userMessageOf(err)).catch((e: unknown) =>
        deps.logger.warn({ err: e }, "could not tell the user"),
      );
    }
  });

  return {
    on(subcommand, handler) {
      handlers.set(subcommand, handler);
    },
    handled: () => [...handlers.keys()],
  };
}

/** The plain sentence for a user: an error's own userMessage when it has one, else a generic one. */
export function userMessageOf(err: unknown): string {
  if (
    err &&
    typeof err === "object" &&
    "userMessage" in err &&
    typeof err.userMessage === "string"
  ) {
    return err.userMessage;
  }
  return "Something went wrong on our side and nothing was changed. Please try again in a minute.";
}
