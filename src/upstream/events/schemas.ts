import { z } from "zod";

/** Shapes from shared/spec/live-events-service.md, "Resources and their fields". */

export const EVENT_STATES = ["NOT_STARTED", "PREP_EVENT", "IN_EVENT"] as const;
export type EventState = (typeof EVENT_STATES)[number];

export const WEBHOOK_TYPES = ["EVENT_STATE", "ATTENDEE_INFO"] as const;
export type WebhookType = (typeof WEBHOOK_TYPES)[number];

// ---- token grant ----

export const tokenResponseSchema = z.object({
  access_token: z.string().min(1),
  // Unit not shown by the spec; read as seconds (README: "The upstream services, in brief").
  expires_in: z.number(),
  userId: z.number().int().optional(),
  enterpriseId: z.number().int(),
});

export const userTokenResponseSchema = tokenResponseSchema.extend({ userId: z.number().int() });

// ---- events ----

/** Counts are numbers in the domain; the wire sends them as strings and returns numbers. */
export interface RecurrencePattern {
  recurrenceType: "DAILY" | (string & {});
  /** null when the pattern ends by count. The non-null type is not shown; epoch ms assumed. */
  endDate: number | null;
  recurrenceCount: number;
  frequency: number;
  /** 0 when unused. */
  daysOfWeekMask: number;
  /** 0 when unused. */
  dayOfMonth: number;
  weekOfMonth: "NONE" | (string & {});
}

/**
 * The element shape of panelists, moderators and attendees is not shown by the spec; the Slack
 * side maps users to it in one place. Here they are passed through untouched.
 */
export type EventPerson = unknown;

/** Create/edit body. Required-on-create fields are not shown; these four are always sent. */
export interface EventInput {
  title: string;
  start: number;
  end: number;
  timezone: string;
  description?: string;
  restricted?: boolean;
  requireEmail?: boolean;
  enableAutoRecord?: boolean;
  enablePSTN?: boolean;
  enableChat?: boolean;
  enableAttendeeRoster?: boolean;
  enableQnA?: boolean;
  enableQnAAnonymous?: boolean;
  enableWaterMark?: boolean;
  enableIntroOutro?: boolean;
  customIntroOutro?: boolean;
  recurrencePattern?: RecurrencePattern;
  panelists?: readonly EventPerson[];
  moderators?: readonly EventPerson[];
  attendees?: readonly EventPerson[];
  panelistMessage?: string;
  moderatorMessage?: string;
  attendeeMessage?: string;
}

export type EventPatch = Partial<EventInput>;

/** Numbers come back as numbers; a numeric string is tolerated as the same value. */
const count = z.union([
  z.number(),
  z
    .string()
    .regex(/^-?\d+$/)
    .transform(Number),
]);

export const recurrencePatternSchema = z.object({
  recurrenceType: z.string(),
  endDate: z.number().nullable(),
  recurrenceCount: count,
  frequency: count,
  daysOfWeekMask: z.number().int(),
  dayOfMonth: z.number().int(),
  weekOfMonth: z.string(),
});

export const createEventResponseSchema = z.object({ id: z.string().min(1) });

export const eventSchema = z.object({
  id: z.string(),
  title: z.string(),
  description: z.string(),
  start: z.number().int(),
  end: z.number().int(),
  timezone: z.string(),
  restricted: z.boolean(),
  requireEmail: z.boolean(),
  enableAutoRecord: z.boolean(),
  enablePSTN: z.boolean(),
  enableChat: z.boolean(),
  enableAttendeeRoster: z.boolean(),
  enableQnA: z.boolean(),
  enableQnAAnonymous: z.boolean(),
  enableWaterMark: z.boolean(),
  enableIntroOutro: z.boolean(),
  customIntroOutro: z.boolean(),
  // Absent or null for a one-off event is tolerated: the spec shows no event without one.
  recurrencePattern: recurrencePatternSchema.nullable().optional(),
  panelists: z.array(z.unknown()),
  moderators: z.array(z.unknown()),
  attendees: z.array(z.unknown()),
  panelistMessage: z.string(),
  moderatorMessage: z.string(),
  attendeeMessage: z.string(),
  organizerId: z.number().int(),
  organizerEnterpriseId: z.number().int(),
  created: z.number().int(),
  lastModified: z.number().int(),
  meetingNumericId: z.string(),
  // Other values are not shown but not ruled out either; they are kept as strings.
  status: z.union([z.enum(EVENT_STATES), z.string()]),
  requireRegistration: z.boolean(),
  enterpriseOnly: z.boolean(),
  enableOnPrem: z.boolean(),
  recordingsAvailable: z.boolean(),
  participantPasscode: z.string(),
  attendeeMeetingNumericId: z.string(),
  attendeeMeetingPasscode: z.string(),
  /** Join address without scheme. */
  moderatorUrl: z.string(),
  panelistUrl: z.string(),
  attendeeUrl: z.string(),
  recurrenceStart: z.number().int(),
  recurrenceEnd: z.number().int(),
  recurrenceEndNever: z.boolean(),
  activeAttendeeCount: z.number().int(),
  dialInNumbers: z.record(z.string(), z.string()),
  subscriptionId: z.string(),
  planId: z.string(),
  billingType: z.string(),
  billingEditable: z.boolean(),
});

export type Event = Omit<z.output<typeof eventSchema>, "recurrencePattern" | "status"> & {
  status: EventState | (string & {});
  recurrencePattern?: RecurrencePattern | null;
};

// ---- webhooks ----

export interface WebhookRegistration {
  type: readonly WebhookType[];
  method: "POST" | "PUT";
  headers: Readonly<Record<string, string>>;
  url: string;
}

/**
 * Webhook message fields are capped well below the 64 KB body cap: every message is stored,
 * and its strings live on in the event's state (thousands of sessions) and in digests, so a
 * sender's 40 KB "endpointGuid" would cost memory and store space per attendee. Ids: 128
 * characters (a GUID is 36); names: 256 (cards show 80); e-mails: 254 (the longest address
 * SMTP allows); endpoint types and states: 64. Times are epoch milliseconds.
 */
export const WEBHOOK_FIELD_MAX = { id: 128, name: 256, email: 254, word: 64 } as const;

const id = z.string().min(1).max(WEBHOOK_FIELD_MAX.id);
const epochMs = z.number().int().min(0).max(8_640_000_000_000_000);

export const eventStateInfoSchema = z.object({ state: z.string().max(WEBHOOK_FIELD_MAX.word) });

export const attendeeInfoSchema = z.object({
  // An attendee is one endpointGuid: an empty one names nobody and could not be told apart.
  endpointGuid: id,
  endpointType: z.string().max(WEBHOOK_FIELD_MAX.word),
  infoType: z.enum(["JOIN", "LEFT"]),
  joinTime: epochMs,
  leaveTime: epochMs.optional(),
  name: z.string().max(WEBHOOK_FIELD_MAX.name),
  email: z.string().max(WEBHOOK_FIELD_MAX.email).optional(),
});
export type AttendeeInfo = z.output<typeof attendeeInfoSchema>;

/** A message the events service delivers to a registered webhook URL. */
export const webhookMessageSchema = z.discriminatedUnion("type", [
  z.object({
    eventId: id,
    instanceId: id,
    type: z.literal("EVENT_STATE"),
    info: eventStateInfoSchema,
  }),
  z.object({
    eventId: id,
    instanceId: id,
    type: z.literal("ATTENDEE_INFO"),
    info: attendeeInfoSchema,
  }),
]);
export type WebhookMessage = z.output<typeof webhookMessageSchema>;
