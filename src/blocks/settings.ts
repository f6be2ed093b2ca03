import {
  GUESTS_MAY,
  SETTINGS_ACTIONS,
  SETTINGS_BLOCKS,
  SETTINGS_FIELDS,
  SETTINGS_VIEW,
  type SettingsField,
  SHOW_EMAILS,
} from "../ids.ts";
import type { Audience, Settings } from "../store/index.ts";
import { escapeMrkdwn, type KnownBlock, type ModalView, plain, truncate } from "./kit.ts";

export const SETTINGS_TITLE = "On Air settings";

/**
 * The settings modal: pure builders and the parsing and checking of what an admin submitted.
 * Secrets are write-only here: the view never carries them, only whether one is set.
 */

export interface UsergroupChoice {
  id: string;
  handle: string;
  name: string;
}

export interface SettingsMeta {
  /** Where the admin ran the command, for the ephemeral "saved" answer. */
  channel?: string;
  /** The services whose credentials the last Check found wrong: Save asks before storing them. */
  failed?: CheckedService[];
}

export const CHECKED_SERVICES = ["relay", "events"] as const;
export type CheckedService = (typeof CHECKED_SERVICES)[number];

/** The confirmation's one checkbox value. */
export const SAVE_ANYWAY = "save_anyway";

/** What the Check found, one line per service; "running" while it works. */
export type CheckOutcome = "running" | { lines: string[] };

export interface SettingsViewInput {
  /** Effective settings (the sandbox's credentials filled in when sandboxed). */
  settings: Settings;
  usergroups: readonly UsergroupChoice[];
  meta: SettingsMeta;
  check?: CheckOutcome | undefined;
  /** True when the credentials shown are the embedded sandbox's defaults. */
  sandboxed?: boolean;
}

const KEEP = "set — leave empty to keep";
const UNSET = "not set";
/** Slack's static_select holds at most 100 options. */
const MAX_OPTIONS = 100;

export function audienceValue(a: Audience): string {
  return typeof a === "string" ? a : `group:${a.usergroup}`;
}

function audienceOptions(groups: readonly UsergroupChoice[], current: readonly Audience[]) {
  const opts = [
    { text: plain("Everyone", 75), value: "everyone" },
    { text: plain("Workspace admins and owners", 75), value: "admins" },
  ];
  const seen = new Set<string>();
  const add = (id: string, label: string) => {
    if (seen.has(id) || opts.length >= MAX_OPTIONS) return;
    seen.add(id);
    opts.push({ text: plain(label, 75), value: `group:${id}` });
  };
  // The groups in use come first, so they stay selectable (and stay selected) even when the
  // list is cut at Slack's limit or usergroups.list did not answer.
  for (const a of current) {
    if (typeof a !== "object") continue;
    const g = groups.find((x) => x.id === a.usergroup);
    add(a.usergroup, g ? `Members of @${g.handle}` : `Members of group ${a.usergroup}`);
  }
  for (const g of groups) add(g.id, `Members of @${g.handle}`);
  return opts;
}

const UNITS: Array<[string, number]> = [
  ["d", 86_400_000],
  ["h", 3_600_000],
  ["m", 60_000],
];

/** 14 days → "14d", 90 minutes → "90m": the shortest exact form. */
export function formatDuration(ms: number): string {
  if (ms >= NO_LIMIT) return "never";
  for (const [unit, size] of UNITS) if (ms % size === 0) return `${ms / size}${unit}`;
  return `${Math.ceil(ms / 60_000)}m`;
}

export const MIN_TOKEN_MS = 60_000;
export const MAX_TOKEN_MS = 365 * 86_400_000;
/**
 * "never" as the longest token: members may then mint tokens that never expire (duration -1).
 * Stored as the largest safe integer, which every "at most this long" comparison reads right.
 */
export const NO_LIMIT = Number.MAX_SAFE_INTEGER;

/** "14d", "12h", "90m", "2w" (and "14 days", "12 hours") → ms; undefined when unreadable. */
export function parseDuration(text: string): number | undefined {
  if (/^\s*(never|no limit|unlimited)\s*$/i.test(text)) return NO_LIMIT;
  const m = /^\s*(\d{1,6})\s*(w|weeks?|d|days?|h|hours?|m|min|mins|minutes?)\s*$/i.exec(text);
  if (!m?.[1] || !m[2]) return undefined;
  const n = Number(m[1]);
  const u = m[2].toLowerCase();
  const size = u.startsWith("w")
    ? 7 * 86_400_000
    : u.startsWith("d")
      ? 86_400_000
      : u.startsWith("h")
        ? 3_600_000
        : 60_000;
  return n * size;
}

function textInput(
  id: SettingsField,
  label: string,
  opts: { initial?: string | undefined; placeholder?: string; hint?: string; max?: number },
): KnownBlock {
  return {
    type: "input",
    block_id: id,
    optional: true,
    label: plain(label, 2000),
    ...(opts.hint ? { hint: plain(opts.hint, 2000) } : {}),
    element: {
      type: "plain_text_input",
      action_id: id,
      ...(opts.initial ? { initial_value: opts.initial } : {}),
      ...(opts.placeholder ? { placeholder: plain(opts.placeholder, 150) } : {}),
      ...(opts.max ? { max_length: opts.max } : {}),
    },
  } as KnownBlock;
}

function audienceInput(
  id: SettingsField,
  label: string,
  current: Audience,
  options: ReturnType<typeof audienceOptions>,
): KnownBlock {
  const initial = options.find((o) => o.value === audienceValue(current)) ?? options[0];
  return {
    type: "input",
    block_id: id,
    label: plain(label, 2000),
    element: {
      type: "static_select",
      action_id: id,
      options,
      ...(initial ? { initial_option: initial } : {}),
    },
  } as KnownBlock;
}

function checkText(check: CheckOutcome | undefined): string {
  if (check === undefined) {
    return "_Check_ mints a one-minute relay token, looks up your enterprise, and asks the events service for an enterprise token, with the values above (stored ones where a field is empty); it also compares the app's Slack permissions with what it needs.";
  }
  if (check === "running") return ":hourglass_flowing_sand: Checking the credentials…";
  return truncate(check.lines.join("\n"), 3000);
}

export function settingsView(input: SettingsViewInput): ModalView {
  const s = input.settings;
  const options = audienceOptions(input.usergroups, [s.policy.whoMaySchedule, s.policy.whoMayMint]);
  const blocks: KnownBlock[] = [
    {
      type: "section",
      text: {
        type: "mrkdwn",
        text: input.sandboxed
          ? "*Events service and relay.* This app talks to the embedded sandbox; its credentials are filled in. Secrets are never shown: leave a secret empty to keep the stored one."
          : "*Events service and relay.* Secrets are never shown: leave a secret empty to keep the stored one.",
      },
    },
    textInput(SETTINGS_FIELDS.eventsKey, "Events app key", {
      initial: s.eventsAppKey,
      placeholder: "The application key of your events app",
      max: 200,
    }),
    textInput(SETTINGS_FIELDS.eventsSecret, "Events app secret", {
      placeholder: s.eventsAppSecret ? KEEP : UNSET,
      max: 500,
    }),
    textInput(SETTINGS_FIELDS.relayUsername, "Relay username", {
      initial: s.relayUsername,
      placeholder: "The enterprise's relay user (Basic credentials)",
      max: 200,
    }),
    textInput(SETTINGS_FIELDS.relayPassword, "Relay password", {
      placeholder: s.relayPassword ? KEEP : UNSET,
      max: 500,
    }),
    {
      type: "actions",
      block_id: SETTINGS_BLOCKS.check,
      elements: [
        {
          type: "button",
          action_id: SETTINGS_ACTIONS.check,
          text: plain("Check", 75),
          value: "check",
        },
      ],
    },
    {
      type: "context",
      block_id: SETTINGS_BLOCKS.checkResult,
      elements: [{ type: "mrkdwn", text: checkText(input.check) }],
    },
    ...saveAnywayInput(input.meta.failed ?? []),
    { type: "divider" },
    audienceInput(
      SETTINGS_FIELDS.whoMaySchedule,
      "Who may schedule events",
      s.policy.whoMaySchedule,
      options,
    ),
    audienceInput(
      SETTINGS_FIELDS.whoMayMint,
      "Who may mint relay tokens",
      s.policy.whoMayMint,
      options,
    ),
    guestsInput(s.policy.guestsMay === true),
    textInput(SETTINGS_FIELDS.longestToken, "Longest relay token allowed", {
      initial: formatDuration(s.longestTokenMs),
      hint: "A number and a unit: 90m, 12h, 14d or 2w (at most 365d), or never to allow tokens that never expire.",
      max: 20,
    }),
    {
      type: "input",
      block_id: SETTINGS_FIELDS.auditChannel,
      optional: true,
      label: plain("Audit channel", 2000),
      hint: plain("Who scheduled, edited, cancelled and minted what (never a token).", 2000),
      element: {
        type: "conversations_select",
        action_id: SETTINGS_FIELDS.auditChannel,
        filter: { include: ["public", "private"], exclude_bot_users: true },
        ...(s.auditChannel ? { initial_conversation: s.auditChannel } : {}),
      },
    } as KnownBlock,
    {
      type: "input",
      block_id: SETTINGS_FIELDS.privacy,
      optional: true,
      label: plain("Privacy", 2000),
      element: {
        type: "checkboxes",
        action_id: SETTINGS_FIELDS.privacy,
        options: [
          { text: plain("Show attendee e-mail addresses in live threads", 75), value: SHOW_EMAILS },
        ],
        ...(s.privacy.showAttendeeEmails
          ? {
              initial_options: [
                {
                  text: plain("Show attendee e-mail addresses in live threads", 75),
                  value: SHOW_EMAILS,
                },
              ],
            }
          : {}),
      },
    } as KnownBlock,
  ];
  return {
    type: "modal",
    callback_id: SETTINGS_VIEW,
    title: plain(SETTINGS_TITLE, 24),
    submit: plain("Save", 24),
    close: plain("Cancel", 24),
    private_metadata: JSON.stringify(input.meta),
    blocks,
  };
}

const SERVICE_WORDS: Record<CheckedService, string> = {
  relay: "relay username and password",
  events: "events app key and secret",
};

/** The services' credentials in words: "relay username and password". */
export function servicesInWords(services: readonly CheckedService[]): string {
  return services.map((s) => SERVICE_WORDS[s]).join(" and the ");
}

/** After a failed Check: the box that lets Save store those credentials all the same. */
function saveAnywayInput(failed: readonly CheckedService[]): KnownBlock[] {
  if (failed.length === 0) return [];
  const option = {
    text: plain(`Save them even though Check failed`, 75),
    value: SAVE_ANYWAY,
  };
  return [
    {
      type: "input",
      block_id: SETTINGS_BLOCKS.saveAnyway,
      optional: true,
      label: plain(`Check failed for the ${servicesInWords(failed)}`, 2000),
      hint: plain("Fix them and press Check again, or tick this to save them as they are.", 2000),
      element: { type: "checkboxes", action_id: SETTINGS_BLOCKS.saveAnyway, options: [option] },
    } as KnownBlock,
  ];
}

const GUESTS_LABEL = "Guests may schedule and mint, where the choices above include them";

/** The policy's guest choice: off unless an admin ticks it. */
function guestsInput(on: boolean): KnownBlock {
  const option = { text: plain(GUESTS_LABEL, 75), value: GUESTS_MAY };
  return {
    type: "input",
    block_id: SETTINGS_FIELDS.guests,
    optional: true,
    label: plain("Guests", 2000),
    hint: plain(
      "Single- and multi-channel guests. Off: they may not schedule events or mint relay tokens, whatever the choices above say.",
      2000,
    ),
    element: {
      type: "checkboxes",
      action_id: SETTINGS_FIELDS.guests,
      options: [option],
      ...(on ? { initial_options: [option] } : {}),
    },
  } as KnownBlock;
}

export function decodeSettingsMeta(raw: string | undefined): SettingsMeta {
  if (!raw) return {};
  try {
    const v = JSON.parse(raw) as { channel?: unknown; failed?: unknown } | null;
    if (!v || typeof v !== "object") return {};
    const out: SettingsMeta = {};
    if (typeof v.channel === "string") out.channel = v.channel;
    if (Array.isArray(v.failed)) {
      const failed = CHECKED_SERVICES.filter((s) => (v.failed as unknown[]).includes(s));
      if (failed.length > 0) out.failed = failed;
    }
    return out;
  } catch {
    // an unreadable private_metadata only loses the ephemeral "saved" answer
  }
  return {};
}

/** Mrkdwn for the Check's outcome lines. */
export function checkLine(ok: boolean, service: string, detail: string): string {
  return `${ok ? ":white_check_mark:" : ":x:"} *${service}:* ${escapeMrkdwn(detail)}`;
}
