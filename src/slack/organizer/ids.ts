/**
 * The organizer area's callback, block and action ids. Input blocks use the same string for the
 * block and its one element, so a view's state reads as `values[id][id]`.
 */

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
