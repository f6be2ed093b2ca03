/**
 * What the embedded live events service accepts (spec/live-events-service.md), as strict zod
 * schemas. Written apart from the app's own schemas (src/upstream/events/schemas.ts) on purpose:
 * the sandbox is the app's counterpart, so a field the app gets wrong is refused here, not
 * agreed with. Only the list of webhook type names is shared: it is the contract's vocabulary.
 */
import { z } from "zod";
import { WEBHOOK_TYPES, type WebhookType } from "../upstream/events/schemas.ts";

export type { WebhookType };

/** The first problem, in one sentence, for the call log (events errors carry no body). */
export function validate<T extends z.ZodType>(
  schema: T,
  input: unknown,
): { ok: true; data: z.output<T> } | { ok: false; reason: string } {
  const r = schema.safeParse(input);
  if (r.success) return { ok: true, data: r.data };
  const issue = r.error.issues[0];
  const where = issue && issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
  // A record's key refused: the key's own reason says which rule it broke.
  const inner = issue?.code === "invalid_key" ? issue.issues[0]?.message : undefined;
  return { ok: false, reason: `${where}${inner ?? issue?.message ?? "invalid body"}` };
}

/** A field's type error; "is required" when it is missing (only required fields reach this). */
const expected = (what: string) => (i: { input: unknown }) =>
  i.input === undefined ? "is required" : what;

const epochMs = z
  .number({ error: expected("must be an integer (epoch ms)") })
  .int("must be an integer (epoch ms)")
  .nonnegative("must be an integer (epoch ms)")
  .refine(Number.isSafeInteger, "must be an integer (epoch ms)");

/** A positive integer sent as a string, as the spec shows recurrenceCount and frequency. */
const countString = z
  .string({ error: "must be a positive integer sent as a string" })
  .regex(/^\d+$/, "must be a positive integer sent as a string")
  .transform(Number)
  .refine((n) => Number.isSafeInteger(n) && n >= 1, "must be >= 1");

const smallInt = z
  .number({ error: "must be a non-negative integer" })
  .int("must be a non-negative integer")
  .nonnegative("must be a non-negative integer");

const RecurrencePattern = z
  .strictObject({
    // Only DAILY is shown by the spec; the sandbox cannot honestly model other patterns.
    recurrenceType: z.literal("DAILY", { error: 'must be "DAILY"' }),
    endDate: epochMs.nullable().optional(),
    recurrenceCount: countString.optional(),
    frequency: countString,
    daysOfWeekMask: smallInt.default(0),
    dayOfMonth: smallInt.default(0),
    weekOfMonth: z.literal("NONE", { error: 'must be "NONE"' }).default("NONE"),
  })
  .refine(
    (p) => (p.recurrenceCount !== undefined) !== (p.endDate !== undefined && p.endDate !== null),
    "ends either by recurrenceCount or by endDate, exactly one",
  )
  .transform((p) => ({
    recurrenceType: p.recurrenceType,
    endDate: p.endDate ?? null,
    recurrenceCount: p.recurrenceCount ?? 0,
    frequency: p.frequency,
    daysOfWeekMask: p.daysOfWeekMask,
    dayOfMonth: p.dayOfMonth,
    weekOfMonth: p.weekOfMonth,
  }));
export type RecurrencePattern = z.output<typeof RecurrencePattern>;

function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const text = z.string({ error: expected("must be a string") });
const flag = z.boolean({ error: "must be a boolean" });
// Element shape is not shown by the spec: e-mail strings or objects are taken as given.
const people = z.array(
  z.union([z.string(), z.record(z.string(), z.unknown())], {
    error: "must be an e-mail string or an object",
  }),
  { error: "must be an array of strings or objects" },
);

/** Every request field of an Event, each optional: an edit sends only what changes. */
const EventFieldsShape = z.strictObject(
  {
    title: text.refine((t) => t.trim() !== "", "must not be empty"),
    description: text,
    start: epochMs,
    end: epochMs,
    timezone: text.refine(isTimeZone, "must be an IANA time zone name"),
    restricted: flag,
    requireEmail: flag,
    enableAutoRecord: flag,
    enablePSTN: flag,
    enableChat: flag,
    enableAttendeeRoster: flag,
    enableQnA: flag,
    enableQnAAnonymous: flag,
    enableWaterMark: flag,
    enableIntroOutro: flag,
    customIntroOutro: flag,
    recurrencePattern: RecurrencePattern.nullable(),
    panelists: people,
    moderators: people,
    attendees: people,
    panelistMessage: text,
    moderatorMessage: text,
    attendeeMessage: text,
  },
  { error: (i) => (i.code === "unrecognized_keys" ? undefined : "must be a JSON object") },
);
export type EventFields = z.output<typeof EventFieldsShape>;

export const EventEdit = EventFieldsShape.partial();
/** Not shown by the spec; the sandbox requires what an event cannot exist without. */
export const EventCreate = EventEdit.extend({
  title: EventFieldsShape.shape.title,
  start: EventFieldsShape.shape.start,
  end: EventFieldsShape.shape.end,
});

export const DEFAULT_FIELDS: Omit<EventFields, "title" | "start" | "end"> = {
  description: "",
  timezone: "UTC",
  restricted: false,
  requireEmail: false,
  enableAutoRecord: false,
  enablePSTN: false,
  enableChat: false,
  enableAttendeeRoster: false,
  enableQnA: false,
  enableQnAAnonymous: false,
  enableWaterMark: false,
  enableIntroOutro: false,
  customIntroOutro: false,
  recurrencePattern: null,
  panelists: [],
  moderators: [],
  attendees: [],
  panelistMessage: "",
  moderatorMessage: "",
  attendeeMessage: "",
};

/** Framing headers belong to the delivery itself; a registered one would corrupt it. */
const FRAMING_HEADERS = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
  "expect",
]);

const headerValues = z
  .record(
    z
      .string()
      .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, "a header name is not valid")
      .refine((n) => !FRAMING_HEADERS.has(n.toLowerCase()), "a framing header is not allowed"),
    z
      .string({ error: "header values must be strings" })
      .refine((v) => !/[\r\n\0]/.test(v), "header values must not contain line breaks"),
    { error: (i) => (i.code === "invalid_type" ? "must be an object of strings" : undefined) },
  )
  .default({});

const hookUrl = z
  .string({ error: "must be a string" })
  .refine((u) => URL.canParse(u), "must be an absolute URL")
  .refine(
    (u) => !URL.canParse(u) || /^https?:$/.test(new URL(u).protocol),
    "must be http or https",
  );

export const WebhookRegistration = z
  .strictObject(
    {
      type: z
        .array(z.enum(WEBHOOK_TYPES, { error: `must be one of ${WEBHOOK_TYPES.join(", ")}` }), {
          error: "must be a non-empty array",
        })
        .min(1, "must be a non-empty array"),
      method: z.enum(["POST", "PUT"], { error: 'must be "POST" or "PUT"' }),
      headers: headerValues,
      url: hookUrl,
    },
    { error: (i) => (i.code === "unrecognized_keys" ? undefined : "must be a JSON object") },
  )
  .transform((b) => ({
    types: [...new Set(b.type)],
    config: { url: b.url, method: b.method, headers: b.headers },
  }));
export type WebhookConfig = z.output<typeof WebhookRegistration>["config"];

export const WebhookTypeSegment = z.enum(WEBHOOK_TYPES, {
  error: `the type segment must be one of ${WEBHOOK_TYPES.join(", ")}`,
});

const EMAIL = /^[^@\s]+@([^@\s]+)$/;

const credentials = {
  client_id: z.string({ error: "is a required string" }),
  client_secret: z.string({ error: "is a required string" }),
};

/** The token request: one shape per grant, so a field the grant does not take is refused. */
export const TokenRequest = z.discriminatedUnion(
  "grant_type",
  [
    z.strictObject({
      grant_type: z.literal("user_app"),
      properties: z.strictObject({
        ...credentials,
        user_email: z
          .string({ error: "user_app needs an e-mail address here" })
          .regex(EMAIL, "user_app needs an e-mail address here"),
      }),
    }),
    z.strictObject({
      grant_type: z.literal("enterprise_app"),
      properties: z.strictObject(credentials),
    }),
  ],
  { error: "must be user_app or enterprise_app" },
);

/** The domain of an address the TokenRequest schema has checked. */
export function emailDomain(email: string): string {
  return (EMAIL.exec(email)?.[1] ?? "").toLowerCase();
}
