/**
 * On Air's Workflow Builder steps as the manifest declares them (v1 form: parameters keyed by
 * name, with `is_required`). The names are fixed (README: "In Workflow Builder"):
 * workflows built on them keep working only while they stay as they are.
 */

export const STEPS = {
  schedule: "schedule_live_event",
  attendance: "get_event_attendance",
} as const;

export type StepId = (typeof STEPS)[keyof typeof STEPS];

export interface StepParameter {
  readonly type: string;
  readonly title: string;
  readonly description: string;
  readonly is_required: boolean;
}

export interface StepDefinition {
  readonly title: string;
  readonly description: string;
  readonly input_parameters: Readonly<Record<string, StepParameter>>;
  readonly output_parameters: Readonly<Record<string, StepParameter>>;
}

const param = (
  type: string,
  title: string,
  description: string,
  is_required = true,
): StepParameter => ({ type, title, description, is_required });

export const STEP_DEFINITIONS: Readonly<Record<StepId, StepDefinition>> = {
  [STEPS.schedule]: {
    title: "Schedule a live event",
    description:
      "Schedules a webinar, town hall or all-hands on the live events service as its organizer would with /onair schedule.",
    input_parameters: {
      title: param("string", "Title", "The event's title (up to 200 characters)"),
      start: param("slack#/types/timestamp", "Start", "When the event starts"),
      end: param("slack#/types/timestamp", "End", "When the event ends"),
      organizer: param(
        "slack#/types/user_id",
        "Organizer",
        "Who schedules it: someone allowed to schedule, with an events account under their Slack e-mail",
      ),
      description: param("string", "Description", "What attendees read about it", false),
      channel: param(
        "slack#/types/channel_id",
        "Channel to notify",
        "Gets the event's live card and its reminders",
        false,
      ),
    },
    output_parameters: {
      event_id: param("string", "Event ID", "The event's ID on the live events service"),
      join_url: param("string", "Join link", "The attendees' join link"),
      start: param("slack#/types/timestamp", "Start", "When the event starts"),
    },
  },
  [STEPS.attendance]: {
    title: "Get a live event's attendance",
    description:
      "Reads the attendance of an event of this workspace: counts only, never names or e-mails.",
    input_parameters: {
      event_id: param("string", "Event ID", "The event's ID on the live events service"),
    },
    output_parameters: {
      peak: param("integer", "Peak", "The most attendees in at once"),
      unique: param("integer", "Unique attendees", "Everyone who joined at least once"),
      present_at_end: param(
        "integer",
        "Present at the end",
        "Attendees still in at the end (or now, while it runs)",
      ),
      state: param("string", "State", "NOT_STARTED, PREP_EVENT, IN_EVENT, ENDED or CANCELLED"),
    },
  },
};
