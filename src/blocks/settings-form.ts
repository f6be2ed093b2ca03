import {
  GUESTS_MAY,
  SETTINGS_BLOCKS,
  SETTINGS_FIELDS,
  type SettingsField,
  SHOW_EMAILS,
} from "../ids.ts";
import type { Audience, Settings } from "../store/index.ts";
import {
  audienceValue,
  type CheckedService,
  MAX_TOKEN_MS,
  MIN_TOKEN_MS,
  NO_LIMIT,
  parseDuration,
  SAVE_ANYWAY,
} from "./settings.ts";

/**
 * The settings form read back and applied to the stored settings: what the admin typed, checked
 * field by field, with the names (never the values) of what changed.
 */

/** Slack's view state: values[block_id][action_id]. */
export type ViewStateValues = Record<
  string,
  Record<
    string,
    {
      type?: string;
      value?: string | null;
      selected_option?: { value: string } | null;
      selected_options?: Array<{ value: string }>;
      selected_conversation?: string | null;
    }
  >
>;

/** What the admin typed; undefined means the field was left empty. */
export interface SettingsForm {
  eventsAppKey: string | undefined;
  eventsAppSecret: string | undefined;
  relayUsername: string | undefined;
  relayPassword: string | undefined;
  whoMaySchedule: string | undefined;
  whoMayMint: string | undefined;
  /** Guests may schedule and mint when the audiences include them (absent: no). */
  guestsMay?: boolean;
  longestToken: string | undefined;
  auditChannel: string | undefined;
  showAttendeeEmails: boolean;
  /** Ticked after a failed Check: store the credentials that failed all the same. */
  saveAnyway?: boolean;
}

function field(values: ViewStateValues, id: SettingsField) {
  return values[id]?.[id];
}

function text(values: ViewStateValues, id: SettingsField): string | undefined {
  const v = field(values, id)?.value;
  return typeof v === "string" && v.trim() !== "" ? v.trim() : undefined;
}

/** Secrets are kept as typed: surrounding spaces may be part of a password. */
function secret(values: ViewStateValues, id: SettingsField): string | undefined {
  const v = field(values, id)?.value;
  return typeof v === "string" && v !== "" ? v : undefined;
}

export function readSettingsForm(values: ViewStateValues): SettingsForm {
  return {
    eventsAppKey: text(values, SETTINGS_FIELDS.eventsKey),
    eventsAppSecret: secret(values, SETTINGS_FIELDS.eventsSecret),
    relayUsername: text(values, SETTINGS_FIELDS.relayUsername),
    relayPassword: secret(values, SETTINGS_FIELDS.relayPassword),
    whoMaySchedule: field(values, SETTINGS_FIELDS.whoMaySchedule)?.selected_option?.value,
    whoMayMint: field(values, SETTINGS_FIELDS.whoMayMint)?.selected_option?.value,
    guestsMay: (field(values, SETTINGS_FIELDS.guests)?.selected_options ?? []).some(
      (o) => o.value === GUESTS_MAY,
    ),
    longestToken: text(values, SETTINGS_FIELDS.longestToken),
    auditChannel: field(values, SETTINGS_FIELDS.auditChannel)?.selected_conversation ?? undefined,
    showAttendeeEmails: (field(values, SETTINGS_FIELDS.privacy)?.selected_options ?? []).some(
      (o) => o.value === SHOW_EMAILS,
    ),
    saveAnyway: (
      values[SETTINGS_BLOCKS.saveAnyway]?.[SETTINGS_BLOCKS.saveAnyway]?.selected_options ?? []
    ).some((o) => o.value === SAVE_ANYWAY),
  };
}

function parseAudience(v: string | undefined): Audience | undefined {
  if (v === "everyone" || v === "admins") return v;
  const m = /^group:([A-Z0-9]+)$/.exec(v ?? "");
  return m?.[1] ? { usergroup: m[1] } : undefined;
}

export type SettingsErrors = Partial<Record<SettingsField, string>>;

/** The names of the fields that changed, for the audit record (never their values). */
export type SettingsChange =
  | keyof Settings
  | "policy.whoMaySchedule"
  | "policy.whoMayMint"
  | "policy.guestsMay";

/**
 * Applies the form to the stored settings. Empty secrets keep the stored ones. Returns the new
 * settings, or inline errors keyed by block id (Slack shows them under the fields).
 */
export function applySettingsForm(
  stored: Settings,
  form: SettingsForm,
):
  | { ok: true; settings: Settings; changed: SettingsChange[] }
  | { ok: false; errors: SettingsErrors } {
  const errors: SettingsErrors = {};
  const F = SETTINGS_FIELDS;
  if (form.eventsAppKey !== undefined && /\s/.test(form.eventsAppKey)) {
    errors[F.eventsKey] = "An app key has no spaces. Paste it again from your events app.";
  }
  if (form.eventsAppSecret !== undefined && !form.eventsAppKey) {
    errors[F.eventsKey] = "Give the app key that goes with this secret.";
  }
  if (form.relayUsername !== undefined && /[:\s]/.test(form.relayUsername)) {
    errors[F.relayUsername] =
      "A relay username cannot contain a colon or spaces. Check it on the relay's admin page.";
  }
  if (form.relayPassword !== undefined && !form.relayUsername) {
    errors[F.relayUsername] = "Give the relay username that goes with this password.";
  }
  const schedule = parseAudience(form.whoMaySchedule);
  if (!schedule) errors[F.whoMaySchedule] = "Pick who may schedule events.";
  const mint = parseAudience(form.whoMayMint);
  if (!mint) errors[F.whoMayMint] = "Pick who may mint relay tokens.";
  let longest = stored.longestTokenMs;
  if (form.longestToken === undefined) {
    errors[F.longestToken] = "Give the longest token allowed, like 14d.";
  } else {
    const ms = parseDuration(form.longestToken);
    if (ms === undefined) {
      errors[F.longestToken] = "Use a number and a unit, like 90m, 12h, 14d or 2w.";
    } else if (ms !== NO_LIMIT && (ms < MIN_TOKEN_MS || ms > MAX_TOKEN_MS)) {
      errors[F.longestToken] = "Pick between 1 minute and 365 days, or never.";
    } else {
      longest = ms;
    }
  }
  if (Object.keys(errors).length > 0 || !schedule || !mint) return { ok: false, errors };

  const next: Settings = {
    ...stored,
    policy: {
      whoMaySchedule: schedule,
      whoMayMint: mint,
      ...(form.guestsMay ? { guestsMay: true } : {}),
    },
    longestTokenMs: longest,
    privacy: { showAttendeeEmails: form.showAttendeeEmails },
  };
  const set = <K extends "eventsAppKey" | "relayUsername" | "auditChannel">(
    k: K,
    v: string | undefined,
  ) => {
    if (v === undefined) delete next[k];
    else next[k] = v;
  };
  set("eventsAppKey", form.eventsAppKey);
  set("relayUsername", form.relayUsername);
  set("auditChannel", form.auditChannel);
  if (form.eventsAppSecret !== undefined) next.eventsAppSecret = form.eventsAppSecret;
  if (form.relayPassword !== undefined) next.relayPassword = form.relayPassword;

  const changed: SettingsChange[] = [];
  for (const k of [
    "eventsAppKey",
    "eventsAppSecret",
    "relayUsername",
    "relayPassword",
    "longestTokenMs",
    "auditChannel",
  ] as const) {
    if (stored[k] !== next[k]) changed.push(k);
  }
  if (audienceValue(stored.policy.whoMaySchedule) !== audienceValue(schedule)) {
    changed.push("policy.whoMaySchedule");
  }
  if (audienceValue(stored.policy.whoMayMint) !== audienceValue(mint)) {
    changed.push("policy.whoMayMint");
  }
  if ((stored.policy.guestsMay === true) !== (form.guestsMay === true)) {
    changed.push("policy.guestsMay");
  }
  if (stored.privacy.showAttendeeEmails !== next.privacy.showAttendeeEmails)
    changed.push("privacy");
  return { ok: true, settings: next, changed };
}

/** Which fields hold each service's credentials, as SettingsChange names them. */
const CREDENTIALS: Record<CheckedService, readonly SettingsChange[]> = {
  relay: ["relayUsername", "relayPassword"],
  events: ["eventsAppKey", "eventsAppSecret"],
};

/**
 * The services whose credentials the last Check found wrong and that Save would now store
 * changed: those need the admin's "save anyway" first. Credentials left as stored are not asked
 * about (saving changes nothing for them).
 */
export function unconfirmedFailures(
  failed: readonly CheckedService[],
  changed: readonly SettingsChange[],
  form: Pick<SettingsForm, "saveAnyway">,
): CheckedService[] {
  if (form.saveAnyway) return [];
  return failed.filter((s) => CREDENTIALS[s].some((f) => changed.includes(f)));
}
