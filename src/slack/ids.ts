/**
 * Every name Slack knows us by: the slash command, shortcuts, callback ids, action ids and the
 * events we subscribe to. The manifest is rendered from these, and listeners register with them,
 * so the two cannot drift apart.
 */

export const COMMAND = "/onair" as const;

export const SUBCOMMANDS = [
  "help",
  "schedule",
  "edit",
  "cancel",
  "list",
  "show",
  "notify",
  "mute",
  "link",
  "unlink",
  "whoami",
  "token",
  "tokens",
  "settings",
] as const;
export type Subcommand = (typeof SUBCOMMANDS)[number];

export const SHORTCUTS = {
  scheduleEvent: {
    callbackId: "schedule_event",
    name: "Schedule a live event",
    description: "Schedule a webinar, town hall or all-hands on the live events service",
  },
} as const;

/** Events API subscriptions (bot events). */
export const BOT_EVENTS = ["app_home_opened", "app_uninstalled", "tokens_revoked"] as const;
export type BotEvent = (typeof BOT_EVENTS)[number];
