/**
 * The core area's callback, block and action ids. Input blocks use the same string for the block
 * and its one element, so a view's state reads as `values[id][id]`.
 */

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
} as const;
export type SettingsField = (typeof SETTINGS_FIELDS)[keyof typeof SETTINGS_FIELDS];

export const SETTINGS_BLOCKS = {
  check: "st_check",
  checkResult: "st_check_result",
} as const;

export const SETTINGS_ACTIONS = {
  check: "st_check_credentials",
} as const;

/** The one checkbox of the privacy field. */
export const SHOW_EMAILS = "show_attendee_emails" as const;
