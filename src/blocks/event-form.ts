import type { types } from "@slack/bolt";
import {
  COUNT_MAX,
  DEFAULT_REMINDERS,
  type EventDraft,
  type FlagName,
  FREQUENCY_MAX,
  PEOPLE_PICKER_MAX,
  REMINDER_CHOICES,
  TITLE_MAX,
} from "../domain/event-draft.ts";
import { EVENT_BLOCKS, EVENT_FIELDS, VIEWS } from "../ids.ts";
import { type KnownBlock, type ModalView, plain, truncate } from "./kit.ts";
import { noiseInput } from "./noise.ts";
import { recurrencePreview } from "./recurrence.ts";

/** The service's boolean switches, grouped as an organizer thinks of them, each explained. */
export const FLAG_GROUPS = {
  access: {
    label: "Who can get in",
    flags: {
      restricted: "Only invited people may join",
      requireEmail: "Ask attendees for their e-mail when joining",
    },
  },
  audience: {
    label: "What attendees can do",
    flags: {
      enableChat: "Chat during the event",
      enableQnA: "Questions and answers",
      enableQnAAnonymous: "Allow anonymous questions",
      enableAttendeeRoster: "Attendees can see who else is there",
    },
  },
  production: {
    label: "Production",
    flags: {
      enableAutoRecord: "Record automatically",
      enablePSTN: "Phone dial-in",
      enableWaterMark: "Watermark on the video",
      enableIntroOutro: "Play an intro and outro",
      customIntroOutro: "Use your own intro and outro",
    },
  },
} as const satisfies Record<string, { label: string; flags: Partial<Record<FlagName, string>> }>;

export type FlagGroup = keyof typeof FLAG_GROUPS;

export interface EventFormInput {
  mode: "create" | "edit";
  /** JSON the submit handler needs back (≤ 3,000 characters). */
  privateMetadata: string;
  /** Zone names to offer; the first is the default when values.timezone is unset. */
  zones: readonly string[];
  values: EventDraft;
  /** People fields too long to edit here (counts shown in a note instead of a picker). */
  tooManyPeople?: { panelists?: number; moderators?: number };
  /** Shown above the fields, e.g. that a long title was shortened. */
  notes?: readonly string[];
}

const sec = (ms: number) => Math.floor(ms / 1000);

function option(text: string, value: string, description?: string) {
  return {
    text: plain(text, 75),
    value,
    ...(description ? { description: plain(description, 75) } : {}),
  };
}

function minutesWords(m: number): string {
  if (m % 1440 === 0) return m === 1440 ? "1 day before" : `${m / 1440} days before`;
  if (m % 60 === 0) return m === 60 ? "1 hour before" : `${m / 60} hours before`;
  return `${m} minutes before`;
}

function textInput(
  id: string,
  label: string,
  opts: {
    initial?: string | undefined;
    multiline?: boolean;
    optional?: boolean;
    max?: number;
    hint?: string;
    placeholder?: string;
  },
): KnownBlock {
  const element: types.PlainTextInput = {
    type: "plain_text_input",
    action_id: id,
    ...(opts.multiline ? { multiline: true } : {}),
    ...(opts.max ? { max_length: opts.max } : {}),
    ...(opts.placeholder ? { placeholder: plain(opts.placeholder, 150) } : {}),
    ...(opts.initial ? { initial_value: truncate(opts.initial, opts.max ?? 3000) } : {}),
  };
  return {
    type: "input",
    block_id: id,
    optional: opts.optional ?? false,
    label: plain(label, 2000),
    ...(opts.hint ? { hint: plain(opts.hint, 2000) } : {}),
    element,
  } as KnownBlock;
}

function peopleInput(
  id: string,
  label: string,
  users: string[] | undefined,
  tooMany?: number,
): KnownBlock {
  if (tooMany !== undefined) {
    return {
      type: "context",
      block_id: id,
      elements: [
        {
          type: "mrkdwn",
          text: `*${label}:* ${tooMany} people — too many to edit here, so this list is left as it is. Change it on the live events service.`,
        },
      ],
    };
  }
  const element: types.MultiUsersSelect = {
    type: "multi_users_select",
    action_id: id,
    ...(users?.length ? { initial_users: users.slice(0, PEOPLE_PICKER_MAX) } : {}),
  };
  return {
    type: "input",
    block_id: id,
    optional: true,
    label: plain(label, 2000),
    hint: plain("They are invited by the e-mail address on their Slack profile.", 2000),
    element,
  } as KnownBlock;
}

function flagsInput(group: FlagGroup, flags: Partial<Record<FlagName, boolean>>): KnownBlock {
  const g = FLAG_GROUPS[group];
  const id = EVENT_FIELDS[group];
  const entries = Object.entries(g.flags) as [FlagName, string][];
  const options = entries.map(([name, text]) => option(text, name));
  const initial = options.filter((o) => flags[o.value as FlagName]);
  return {
    type: "input",
    block_id: id,
    optional: true,
    label: plain(g.label, 2000),
    element: {
      type: "checkboxes",
      action_id: id,
      options,
      ...(initial.length ? { initial_options: initial } : {}),
    },
  } as KnownBlock;
}

/** The schedule / edit modal. Pure: every value it shows comes in through `input`. */
export function buildEventForm(input: EventFormInput): ModalView {
  const v = input.values;
  const zone = v.timezone ?? input.zones[0] ?? "UTC";
  const zones = input.zones.includes(zone) ? input.zones : [zone, ...input.zones].slice(0, 100);
  const zoneOption = (z: string) => option(truncate(z, 75), z);
  const blocks: KnownBlock[] = [];
  for (const note of input.notes ?? []) {
    blocks.push({ type: "context", elements: [{ type: "mrkdwn", text: truncate(note, 2000) }] });
  }
  blocks.push(
    textInput(EVENT_FIELDS.title, "Title", {
      initial: v.title,
      placeholder: "Quarterly town hall",
      hint: `Up to ${TITLE_MAX} characters.`,
    }),
    textInput(EVENT_FIELDS.description, "Description", {
      initial: v.description,
      multiline: true,
      optional: true,
      max: 3000,
    }),
    {
      type: "input",
      block_id: EVENT_FIELDS.start,
      dispatch_action: true,
      label: plain("Starts", 2000),
      hint: plain("Shown in your own Slack time zone.", 2000),
      element: {
        type: "datetimepicker",
        action_id: EVENT_FIELDS.start,
        ...(v.start !== undefined ? { initial_date_time: sec(v.start) } : {}),
      },
    } as KnownBlock,
    {
      type: "input",
      block_id: EVENT_FIELDS.end,
      label: plain("Ends", 2000),
      element: {
        type: "datetimepicker",
        action_id: EVENT_FIELDS.end,
        ...(v.end !== undefined ? { initial_date_time: sec(v.end) } : {}),
      },
    } as KnownBlock,
    {
      type: "input",
      block_id: EVENT_FIELDS.timezone,
      dispatch_action: true,
      label: plain("Event time zone", 2000),
      hint: plain(
        "The zone the event is held in: a daily series keeps its local start time in this zone, across daylight-saving changes.",
        2000,
      ),
      element: {
        type: "static_select",
        action_id: EVENT_FIELDS.timezone,
        options: zones.map(zoneOption),
        initial_option: zoneOption(zone),
      },
    } as KnownBlock,
    {
      type: "input",
      block_id: EVENT_FIELDS.recurrence,
      dispatch_action: true,
      label: plain("Repeats", 2000),
      element: {
        type: "static_select",
        action_id: EVENT_FIELDS.recurrence,
        options: [option("Does not repeat", "NONE"), option("Daily", "DAILY")],
        initial_option:
          v.recurrence === "DAILY" ? option("Daily", "DAILY") : option("Does not repeat", "NONE"),
      },
    } as KnownBlock,
    {
      type: "input",
      block_id: EVENT_FIELDS.count,
      dispatch_action: true,
      optional: true,
      label: plain("How many times (daily series)", 2000),
      hint: plain(
        "A daily series needs this or the date it runs until, below. The next dates follow as you type.",
        2000,
      ),
      element: {
        type: "number_input",
        action_id: EVENT_FIELDS.count,
        is_decimal_allowed: false,
        min_value: "1",
        // A series made elsewhere may be longer than we offer: shown as it is, never cut.
        max_value: String(Math.max(COUNT_MAX, v.count ?? 0)),
        ...(v.count !== undefined && v.count >= 1 ? { initial_value: String(v.count) } : {}),
        // The preview below follows as the organizer types (Slack allows both on number inputs).
        dispatch_action_config: {
          trigger_actions_on: ["on_enter_pressed", "on_character_entered"],
        },
      },
    } as KnownBlock,
    {
      type: "input",
      block_id: EVENT_FIELDS.until,
      dispatch_action: true,
      optional: true,
      label: plain("Or until (daily series)", 2000),
      hint: plain("The last day it may happen, in the event's time zone.", 2000),
      element: {
        type: "datepicker",
        action_id: EVENT_FIELDS.until,
        ...(v.until ? { initial_date: v.until } : {}),
      },
    } as KnownBlock,
    {
      type: "input",
      block_id: EVENT_FIELDS.frequency,
      dispatch_action: true,
      optional: true,
      label: plain("Every how many days (daily series)", 2000),
      hint: plain("1 means every day, 2 every other day.", 2000),
      element: {
        type: "number_input",
        action_id: EVENT_FIELDS.frequency,
        is_decimal_allowed: false,
        min_value: "1",
        max_value: String(Math.max(FREQUENCY_MAX, v.frequency ?? 0)),
        initial_value: String(v.frequency !== undefined && v.frequency >= 1 ? v.frequency : 1),
        // The preview below follows as the organizer types (Slack allows both on number inputs).
        dispatch_action_config: {
          trigger_actions_on: ["on_enter_pressed", "on_character_entered"],
        },
      },
    } as KnownBlock,
    {
      type: "context",
      block_id: EVENT_BLOCKS.preview,
      elements: [{ type: "mrkdwn", text: recurrencePreview({ ...v, timezone: zone }) }],
    },
    { type: "divider" },
    flagsInput("access", v.flags ?? {}),
    flagsInput("audience", v.flags ?? {}),
    flagsInput("production", v.flags ?? {}),
    { type: "divider" },
    peopleInput(EVENT_FIELDS.panelists, "Panelists", v.panelists, input.tooManyPeople?.panelists),
    peopleInput(
      EVENT_FIELDS.moderators,
      "Moderators",
      v.moderators,
      input.tooManyPeople?.moderators,
    ),
    textInput(EVENT_FIELDS.panelistMessage, "Message to panelists", {
      initial: v.panelistMessage,
      multiline: true,
      optional: true,
      max: 3000,
    }),
    textInput(EVENT_FIELDS.moderatorMessage, "Message to moderators", {
      initial: v.moderatorMessage,
      multiline: true,
      optional: true,
      max: 3000,
    }),
    textInput(EVENT_FIELDS.attendeeMessage, "Message to attendees", {
      initial: v.attendeeMessage,
      multiline: true,
      optional: true,
      max: 3000,
    }),
  );
  if (input.mode === "create") {
    const reminders = v.reminders ?? [...DEFAULT_REMINDERS];
    const reminderOptions = REMINDER_CHOICES.map((m) => option(minutesWords(m), String(m)));
    const initialReminders = reminderOptions.filter((o) => reminders.includes(Number(o.value)));
    blocks.push(
      { type: "divider" },
      {
        type: "input",
        block_id: EVENT_FIELDS.channel,
        optional: true,
        label: plain("Channel to notify", 2000),
        hint: plain("Gets the event's live card, reminders and attendee activity.", 2000),
        element: {
          type: "conversations_select",
          action_id: EVENT_FIELDS.channel,
          filter: { include: ["public", "private"], exclude_bot_users: true },
          ...(v.channel ? { initial_conversation: v.channel } : {}),
        },
      } as KnownBlock,
      noiseInput(EVENT_FIELDS.noise),
      {
        type: "input",
        block_id: EVENT_FIELDS.reminders,
        optional: true,
        label: plain("Reminders in that channel", 2000),
        element: {
          type: "checkboxes",
          action_id: EVENT_FIELDS.reminders,
          options: reminderOptions,
          ...(initialReminders.length ? { initial_options: initialReminders } : {}),
        },
      } as KnownBlock,
    );
  }
  return {
    type: "modal",
    callback_id: VIEWS.event,
    private_metadata: input.privateMetadata,
    title: plain(input.mode === "create" ? "Schedule an event" : "Edit event", 24),
    submit: plain(input.mode === "create" ? "Schedule" : "Save changes", 24),
    close: plain("Cancel", 24),
    blocks,
  };
}

/** A modal that only says something: loading, a refusal, a result. */
export function buildNoticeModal(title: string, text: string, privateMetadata = ""): ModalView {
  return {
    type: "modal",
    callback_id: VIEWS.notice,
    private_metadata: privateMetadata,
    title: plain(title, 24),
    close: plain("Close", 24),
    blocks: [{ type: "section", text: { type: "mrkdwn", text: truncate(text, 3000) } }],
  };
}
