import { escapeMrkdwn, truncate } from "../../domain/text.ts";
import { COMMAND, SUBCOMMANDS, type Subcommand } from "../../ids.ts";
import type { CommandContext } from "./context.ts";

/** Each subcommand's arguments (if any) and what it does, for help and the composer's hints. */
export const HELP: Readonly<Record<Subcommand, { args?: string; what: string }>> = {
  help: { what: "show this list" },
  schedule: {
    args: "[when] [title]",
    what: "schedule a live event (opens a form; `tomorrow 3pm Demo` fills in the start and title)",
  },
  edit: { args: "<event>", what: "change an event you organize" },
  cancel: { args: "<event>", what: "cancel an event (asks first)" },
  list: { what: "your upcoming events" },
  show: { args: "<event>", what: "an event's details and links, only for you" },
  notify: {
    args: "<event> [#channel] [off|counter|digest|every]",
    what: "post the event's live card to a channel; the last word sets the attendee notices in its thread: off, counter (a running count), digest (grouped) or every (each join and leave)",
  },
  mute: { args: "<event>", what: "stop live notices for an event in this channel" },
  link: { what: "link your Slack account to your events account (by your Slack e-mail)" },
  unlink: { what: "forget that link" },
  whoami: { what: "which events account you are linked to" },
  token: { what: "mint a relay access token (opens a form)" },
  tokens: { what: "list your enterprise's live relay tokens" },
  settings: { what: "admins: events app and relay credentials, policy, audit channel" },
  report: {
    args: "<event> [files]",
    what: "an event's attendance report, only for you; with files, the chart and CSV posted here",
  },
};

export function helpText(unknown?: string): string {
  const head = unknown
    ? `I don't know \`${COMMAND} ${escapeMrkdwn(truncate(unknown, 40))}\`. Here is what I can do:`
    : "*On Air* — schedule live events and watch them go live. Commands:";
  const lines = SUBCOMMANDS.map((s) => {
    const h = HELP[s];
    return `• \`${COMMAND} ${s}${h.args ? ` ${h.args}` : ""}\` — ${h.what}`;
  });
  return [head, ...lines].join("\n");
}

export async function help(ctx: CommandContext): Promise<void> {
  await ctx.reply(helpText());
}
