/**
 * Every name Slack knows us by, in one place: the slash command, shortcuts, the events we
 * subscribe to, and every callback, block and action id. The manifest is rendered from these and
 * listeners register with them, so the two cannot drift apart. Input blocks use the same string
 * for the block and its one element, so a view's state reads as `values[id][id]`.
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
  "report",
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
export const BOT_EVENTS = [
  "app_home_opened",
  "app_uninstalled",
  "tokens_revoked",
  "link_shared",
  "entity_details_requested",
  "function_executed",
] as const;

/**
 * The host of the events service's join links, unfurled live (link_shared). The manifest is
 * rendered with it (`npm run manifest -- --url … --join-host HOST`); this default is the
 * sandbox's.
 */
export const DEFAULT_JOIN_HOST = "live.sandbox.example.com";
export type BotEvent = (typeof BOT_EVENTS)[number];

export const SETTINGS_VIEW = "onair_settings" as const;

export const SETTINGS_FIELDS = {
  eventsKey: "st_events_key",
  eventsSecret: "st_events_secret",
  relayUsername: "st_relay_username",
  relayPassword: "st_relay_password",
  whoMaySchedule: "st_who_schedule",
  whoMayMint: "st_who_mint",
  longestToken: "st_longest_token",
  auditChannel: "st_audit_channel",
  privacy: "st_privacy",
  guests: "st_guests",
} as const;
export type SettingsField = (typeof SETTINGS_FIELDS)[keyof typeof SETTINGS_FIELDS];

export const SETTINGS_BLOCKS = {
  check: "st_check",
  checkResult: "st_check_result",
  /** After a failed Check: "save these credentials anyway" (an input: Save reads it). */
  saveAnyway: "st_save_anyway",
} as const;

export const SETTINGS_ACTIONS = {
  check: "st_check_credentials",
} as const;

/** The one checkbox of the guests field (policy.guestsMay). */
export const GUESTS_MAY = "guests_may" as const;

/** The one checkbox of the privacy field. */
export const SHOW_EMAILS = "show_attendee_emails" as const;

export const VIEWS = {
  event: "onair_event_form",
  cancel: "onair_cancel_confirm",
  token: "onair_token_form",
  notify: "onair_notify_form",
  notice: "onair_notice",
} as const;

export const EVENT_FIELDS = {
  title: "ev_title",
  description: "ev_description",
  start: "ev_start",
  end: "ev_end",
  timezone: "ev_timezone",
  recurrence: "ev_recurrence",
  count: "ev_count",
  frequency: "ev_frequency",
  until: "ev_until",
  access: "ev_access",
  audience: "ev_audience",
  production: "ev_production",
  panelists: "ev_panelists",
  moderators: "ev_moderators",
  panelistMessage: "ev_panelist_message",
  moderatorMessage: "ev_moderator_message",
  attendeeMessage: "ev_attendee_message",
  channel: "ev_channel",
  noise: "ev_noise",
  reminders: "ev_reminders",
} as const;

/** Not inputs: the recurrence preview (rewritten on each change) and notes. */
export const EVENT_BLOCKS = { preview: "ev_preview" } as const;

export const TOKEN_FIELDS = {
  roles: "tk_roles",
  duration: "tk_duration",
  customHours: "tk_custom_hours",
  clientName: "tk_client_name",
  pairingCode: "tk_pairing_code",
} as const;

export const NOTIFY_FIELDS = {
  channel: "nt_channel",
  noise: "nt_noise",
  reminders: "nt_reminders",
} as const;

export const HOME_ACTIONS = {
  schedule: "onair_home_schedule",
  token: "onair_home_token",
  settings: "onair_home_settings",
  refresh: "onair_home_refresh",
} as const;

export const CARD_ACTIONS = {
  edit: "onair_card_edit",
  cancel: "onair_card_cancel",
  notify: "onair_card_notify",
  attendance: "onair_card_attendance",
} as const;
export type CardAction = (typeof CARD_ACTIONS)[keyof typeof CARD_ACTIONS];

/** The cancel confirmation's red "Yes, cancel it" (a button: a modal's submit cannot be red). */
export const CANCEL_ACTIONS = { yes: "onair_cancel_yes" } as const;

/** The overflow menu beside each event in `/onair list` (value: `<card action>|<eventId>`). */
export const LIST_ACTIONS = { overflow: "onair_list_actions" } as const;
