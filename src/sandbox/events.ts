/**
 * The embedded live events service (spec/live-events-service.md), in memory.
 *
 * Why this file is long: it is the whole service of the spec, operation by operation, in the
 * spec's order, so a reader can check it against the contract side by side.
 */
import { createHash } from "node:crypto";
import {
  acceptsJson,
  header,
  isJsonContentType,
  isPlainObject,
  parseJson,
  type Reply,
  randomDigits,
  randomHex,
  randomToken,
  type ServiceCall,
  secretEquals,
  tokenKey,
} from "./http.ts";
import {
  EVENTS_TOKEN_EXPIRES_IN,
  SANDBOX_ENTERPRISE_ID,
  SANDBOX_SEEDS,
  SANDBOX_USER_DOMAIN,
} from "./seeds.ts";

export const EVENT_STATES = ["NOT_STARTED", "PREP_EVENT", "IN_EVENT"] as const;
export type EventState = (typeof EVENT_STATES)[number];
export const WEBHOOK_TYPES = ["EVENT_STATE", "ATTENDEE_INFO"] as const;
export type WebhookType = (typeof WEBHOOK_TYPES)[number];

const DAY_MS = 24 * 60 * 60 * 1000;

export interface EventsToken {
  readonly grant: "user_app" | "enterprise_app";
  readonly userId: number | undefined;
  readonly enterpriseId: number;
  readonly expiresAt: number;
}

export interface RecurrencePattern {
  recurrenceType: "DAILY";
  endDate: number | null;
  recurrenceCount: number;
  frequency: number;
  daysOfWeekMask: number;
  dayOfMonth: number;
  weekOfMonth: "NONE";
}

/** The request fields of an Event, every one filled (defaults applied on create). */
export interface EventFields {
  title: string;
  description: string;
  start: number;
  end: number;
  timezone: string;
  restricted: boolean;
  requireEmail: boolean;
  enableAutoRecord: boolean;
  enablePSTN: boolean;
  enableChat: boolean;
  enableAttendeeRoster: boolean;
  enableQnA: boolean;
  enableQnAAnonymous: boolean;
  enableWaterMark: boolean;
  enableIntroOutro: boolean;
  customIntroOutro: boolean;
  recurrencePattern: RecurrencePattern | null;
  panelists: unknown[];
  moderators: unknown[];
  attendees: unknown[];
  panelistMessage: string;
  moderatorMessage: string;
  attendeeMessage: string;
}

export interface WebhookConfig {
  readonly url: string;
  readonly method: "POST" | "PUT";
  readonly headers: Readonly<Record<string, string>>;
}

export interface LiveAttendee {
  readonly endpointGuid: string;
  readonly endpointType: string;
  readonly name: string;
  readonly email?: string;
  readonly joinTime: number;
}

export interface StoredEvent {
  readonly id: string;
  readonly organizerId: number;
  fields: EventFields;
  readonly created: number;
  lastModified: number;
  readonly meetingNumericId: string;
  readonly participantPasscode: string;
  readonly attendeeMeetingNumericId: string;
  readonly attendeeMeetingPasscode: string;
  readonly webhooks: Map<WebhookType, WebhookConfig>;
  readonly live: {
    instanceId: string | null;
    state: EventState;
    /** Present attendees of the current instance, by endpointGuid. */
    attendees: Map<string, LiveAttendee>;
    /** Numbers synthetic attendees so their names stay unique across calls. */
    synthetic: number;
  };
}

const STRING_FIELDS = [
  "title",
  "description",
  "timezone",
  "panelistMessage",
  "moderatorMessage",
  "attendeeMessage",
] as const;
const BOOLEAN_FIELDS = [
  "restricted",
  "requireEmail",
  "enableAutoRecord",
  "enablePSTN",
  "enableChat",
  "enableAttendeeRoster",
  "enableQnA",
  "enableQnAAnonymous",
  "enableWaterMark",
  "enableIntroOutro",
  "customIntroOutro",
] as const;
const TIME_FIELDS = ["start", "end"] as const;
const PEOPLE_FIELDS = ["panelists", "moderators", "attendees"] as const;
const EVENT_FIELDS: ReadonlySet<string> = new Set([
  ...STRING_FIELDS,
  ...BOOLEAN_FIELDS,
  ...TIME_FIELDS,
  ...PEOPLE_FIELDS,
  "recurrencePattern",
]);
/** Not shown by the spec; the sandbox requires what an event cannot exist without. */
const REQUIRED_ON_CREATE = ["title", "start", "end"] as const;

const DEFAULT_FIELDS: Omit<EventFields, "title" | "start" | "end"> = {
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

/** A refusal: the status goes on the wire (no body), the reason only into the call log. */
class Refusal {
  constructor(
    readonly status: number,
    readonly reason: string,
  ) {}
}

function refuse(status: number, reason: string): never {
  throw new Refusal(status, reason);
}

function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const isEpochMs = (v: unknown): v is number =>
  typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

/** A positive integer sent as a string, as the spec shows recurrenceCount and frequency. */
function countString(v: unknown, name: string): number {
  if (typeof v !== "string" || !/^\d+$/.test(v)) {
    refuse(400, `recurrencePattern.${name} must be a positive integer sent as a string`);
  }
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 1) refuse(400, `recurrencePattern.${name} must be >= 1`);
  return n;
}

function parseRecurrence(v: unknown): RecurrencePattern | null {
  if (v === null) return null;
  if (!isPlainObject(v)) refuse(400, "recurrencePattern must be an object or null");
  const known = [
    "recurrenceType",
    "endDate",
    "recurrenceCount",
    "frequency",
    "daysOfWeekMask",
    "dayOfMonth",
    "weekOfMonth",
  ];
  for (const k of Object.keys(v)) {
    if (!known.includes(k)) refuse(400, `unknown recurrencePattern field "${k}"`);
  }
  // Only DAILY is shown by the spec; the sandbox cannot honestly model other patterns.
  if (v.recurrenceType !== "DAILY") refuse(400, 'recurrencePattern.recurrenceType must be "DAILY"');
  const frequency = countString(v.frequency, "frequency");
  const endDate = v.endDate === undefined ? null : v.endDate;
  if (endDate !== null && !isEpochMs(endDate)) {
    refuse(400, "recurrencePattern.endDate must be epoch ms or null");
  }
  const hasCount = v.recurrenceCount !== undefined;
  if (hasCount === (endDate !== null)) {
    refuse(400, "recurrencePattern ends either by recurrenceCount or by endDate, exactly one");
  }
  const recurrenceCount = hasCount ? countString(v.recurrenceCount, "recurrenceCount") : 0;
  const small = (name: "daysOfWeekMask" | "dayOfMonth"): number => {
    const x = v[name];
    if (x === undefined) return 0;
    if (typeof x !== "number" || !Number.isInteger(x) || x < 0) {
      refuse(400, `recurrencePattern.${name} must be a non-negative integer`);
    }
    return x;
  };
  const daysOfWeekMask = small("daysOfWeekMask");
  const dayOfMonth = small("dayOfMonth");
  if (v.weekOfMonth !== undefined && v.weekOfMonth !== "NONE") {
    refuse(400, 'recurrencePattern.weekOfMonth must be "NONE"');
  }
  return {
    recurrenceType: "DAILY",
    endDate,
    recurrenceCount,
    frequency,
    daysOfWeekMask,
    dayOfMonth,
    weekOfMonth: "NONE",
  };
}

/** Validates an Event request body strictly: known fields only, each of its declared type. */
export function parseEventFields(body: unknown, mode: "create" | "edit"): Partial<EventFields> {
  if (!isPlainObject(body)) refuse(400, "the body must be a JSON object");
  const out: Partial<EventFields> = {};
  for (const [key, value] of Object.entries(body)) {
    if (!EVENT_FIELDS.has(key)) refuse(400, `unknown event field "${key}"`);
    if ((STRING_FIELDS as readonly string[]).includes(key)) {
      if (typeof value !== "string") refuse(400, `${key} must be a string`);
      (out as Record<string, unknown>)[key] = value;
    } else if ((BOOLEAN_FIELDS as readonly string[]).includes(key)) {
      if (typeof value !== "boolean") refuse(400, `${key} must be a boolean`);
      (out as Record<string, unknown>)[key] = value;
    } else if ((TIME_FIELDS as readonly string[]).includes(key)) {
      if (!isEpochMs(value)) refuse(400, `${key} must be an integer (epoch ms)`);
      (out as Record<string, unknown>)[key] = value;
    } else if ((PEOPLE_FIELDS as readonly string[]).includes(key)) {
      // Element shape is not shown by the spec: e-mail strings or objects are taken as given.
      if (!Array.isArray(value) || !value.every((e) => typeof e === "string" || isPlainObject(e))) {
        refuse(400, `${key} must be an array of strings or objects`);
      }
      (out as Record<string, unknown>)[key] = structuredClone(value);
    } else {
      out.recurrencePattern = parseRecurrence(value);
    }
  }
  if (out.title !== undefined && out.title.trim() === "") refuse(400, "title must not be empty");
  if (out.timezone !== undefined && !isTimeZone(out.timezone)) {
    refuse(400, "timezone must be an IANA time zone name");
  }
  if (mode === "create") {
    for (const k of REQUIRED_ON_CREATE) {
      if (out[k] === undefined) refuse(400, `${k} is required on create`);
    }
  }
  return out;
}

function checkEventInvariants(f: EventFields): void {
  if (f.end <= f.start) refuse(400, "end must be after start");
  const endDate = f.recurrencePattern?.endDate;
  if (endDate !== undefined && endDate !== null && endDate < f.start) {
    refuse(400, "recurrencePattern.endDate must not be before start");
  }
}

function parseWebhookRegistration(body: unknown): { types: WebhookType[]; config: WebhookConfig } {
  if (!isPlainObject(body)) refuse(400, "the body must be a JSON object");
  for (const k of Object.keys(body)) {
    if (!["type", "method", "headers", "url"].includes(k)) {
      refuse(400, `unknown webhook field "${k}"`);
    }
  }
  const { type, method, headers, url } = body;
  if (!Array.isArray(type) || type.length === 0) refuse(400, "type must be a non-empty array");
  for (const t of type) {
    if (!(WEBHOOK_TYPES as readonly unknown[]).includes(t)) {
      refuse(400, "type elements must be EVENT_STATE or ATTENDEE_INFO");
    }
  }
  if (method !== "POST" && method !== "PUT") refuse(400, 'method must be "POST" or "PUT"');
  if (typeof url !== "string") refuse(400, "url must be a string");
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    refuse(400, "url must be an absolute URL");
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    refuse(400, "url must be http or https");
  }
  const out: Record<string, string> = {};
  if (headers !== undefined) {
    if (!isPlainObject(headers)) refuse(400, "headers must be an object of strings");
    for (const [name, value] of Object.entries(headers)) {
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) refuse(400, "a header name is not valid");
      // Framing headers belong to the delivery itself; a registered one would corrupt it.
      if (FRAMING_HEADERS.has(name.toLowerCase())) refuse(400, `header ${name} is not allowed`);
      if (typeof value !== "string" || /[\r\n\0]/.test(value)) {
        refuse(400, "header values must be strings without line breaks");
      }
      out[name] = value;
    }
  }
  return {
    types: [...new Set(type as WebhookType[])],
    config: { url, method, headers: out },
  };
}

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

/** Users are every address at example.com; an id is derived from the address so it is stable. */
class Users {
  private readonly byEmail = new Map<string, number>();
  private readonly byId = new Map<number, string>();

  idFor(email: string): number {
    const key = email.toLowerCase();
    const known = this.byEmail.get(key);
    if (known !== undefined) return known;
    const digest = createHash("sha256").update(key).digest();
    let id = 100_000_000 + (digest.readUInt32BE(0) % 900_000_000);
    while (this.byId.has(id)) id += 1;
    this.byEmail.set(key, id);
    this.byId.set(id, key);
    return id;
  }

  has(id: number): boolean {
    return this.byId.has(id);
  }

  entries(): Array<[string, number]> {
    return [...this.byEmail.entries()];
  }

  restore(email: string, id: number): void {
    this.byEmail.set(email, id);
    this.byId.set(id, email);
  }
}

/** What the sandbox keeps across restarts (persist.ts): users and events, never a token. */
export interface SavedEventsState {
  users: Array<[string, number]>;
  events: Array<
    Omit<StoredEvent, "webhooks" | "live"> & {
      webhooks: Array<[WebhookType, WebhookConfig]>;
      live: Omit<StoredEvent["live"], "attendees"> & { attendees: LiveAttendee[] };
    }
  >;
}

const EMAIL = /^[^@\s]+@([^@\s]+)$/;

const USER_EVENTS = /^\/api\/scheduling\/v1\/users\/([^/]+)\/events$/;
const USER_EVENT = /^\/api\/scheduling\/v1\/users\/([^/]+)\/events\/([^/]+)$/;
const WEBHOOK = /^\/api\/webhook\/v1\/users\/([^/]+)\/events\/([^/]+)$/;
const WEBHOOK_TYPE = /^\/api\/webhook\/v1\/users\/([^/]+)\/events\/([^/]+)\/type\/([^/]+)$/;
export const TOKEN_PATH = "/api/security/v1/oauth/accesstoken";

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    refuse(400, "a path segment is not valid percent-encoding");
  }
}

export interface EventsDeps {
  now(): number;
}

export class EventsService {
  private readonly users = new Users();
  private readonly tokens = new Map<string, EventsToken>();
  private readonly events = new Map<string, StoredEvent>();

  constructor(private readonly deps: EventsDeps) {}

  /** The grant behind a token, if it is one of ours and has not expired. */
  liveToken(token: string): EventsToken | undefined {
    const found = this.tokens.get(tokenKey(token));
    if (found === undefined || this.deps.now() >= found.expiresAt) return undefined;
    return found;
  }

  findEvent(id: string): StoredEvent | undefined {
    return this.events.get(id);
  }

  /** Users and events as plain JSON. Tokens are not kept: a client re-grants after a 401. */
  exportState(): SavedEventsState {
    return {
      users: this.users.entries(),
      events: [...this.events.values()].map((e) => ({
        ...e,
        webhooks: [...e.webhooks.entries()],
        live: { ...e.live, attendees: [...e.live.attendees.values()] },
      })),
    };
  }

  importState(saved: SavedEventsState): void {
    for (const [email, id] of saved.users) this.users.restore(email, id);
    for (const e of saved.events) {
      this.events.set(e.id, {
        ...e,
        webhooks: new Map(e.webhooks),
        live: {
          ...e.live,
          attendees: new Map(e.live.attendees.map((a) => [a.endpointGuid, a])),
        },
      });
    }
  }

  /** The Event get response: every request field plus the service's own. */
  view(e: StoredEvent): Record<string, unknown> {
    const f = e.fields;
    const p = f.recurrencePattern;
    let recurrenceEnd = f.end;
    if (p !== null) {
      recurrenceEnd = p.endDate ?? f.end + (p.recurrenceCount - 1) * p.frequency * DAY_MS;
    }
    const host = "live.sandbox.example.com";
    return {
      id: e.id,
      ...structuredClone(f),
      organizerId: e.organizerId,
      organizerEnterpriseId: SANDBOX_ENTERPRISE_ID,
      created: e.created,
      lastModified: e.lastModified,
      meetingNumericId: e.meetingNumericId,
      status: e.live.state,
      requireRegistration: false,
      enterpriseOnly: f.restricted,
      enableOnPrem: false,
      recordingsAvailable: false,
      participantPasscode: e.participantPasscode,
      attendeeMeetingNumericId: e.attendeeMeetingNumericId,
      attendeeMeetingPasscode: e.attendeeMeetingPasscode,
      moderatorUrl: `${host}/${e.meetingNumericId}/moderator`,
      panelistUrl: `${host}/${e.meetingNumericId}/panelist`,
      attendeeUrl: `${host}/${e.attendeeMeetingNumericId}`,
      recurrenceStart: f.start,
      recurrenceEnd,
      recurrenceEndNever: false,
      activeAttendeeCount: e.live.attendees.size,
      dialInNumbers: {
        alternate: "+1 408 555 0100",
        us: "+1 312 555 0100",
        us_tollfree: "+1 888 555 0100",
      },
      subscriptionId: "sub-sandbox-1001",
      planId: "plan-sandbox-freetrial",
      billingType: "FREETRIAL",
      billingEditable: false,
    };
  }

  handle(call: ServiceCall): Reply {
    try {
      return this.route(call);
    } catch (err) {
      if (err instanceof Refusal) return { status: err.status, reason: err.reason };
      throw err;
    }
  }

  private route(call: ServiceCall): Reply {
    if (!acceptsJson(header(call.headers, "accept"))) refuse(406, "Accept must admit JSON");
    if (call.path === TOKEN_PATH) {
      if (call.method !== "POST") refuse(405, "the token endpoint takes POST");
      return this.grant(call);
    }
    const token = this.bearer(call);
    let m = USER_EVENTS.exec(call.path);
    if (m) {
      if (call.method !== "POST") refuse(405, "method not allowed");
      const userId = this.actingFor(token, m[1]!);
      return this.create(userId, jsonBody(call));
    }
    m = USER_EVENT.exec(call.path);
    if (m) {
      const userId = this.actingFor(token, m[1]!);
      const event = this.ownEvent(userId, m[2]!);
      switch (call.method) {
        case "GET":
          noBody(call);
          return { status: 200, json: this.view(event) };
        case "PUT":
          return this.edit(event, jsonBody(call));
        case "DELETE":
          noBody(call);
          this.events.delete(event.id);
          return { status: 204 };
        default:
          refuse(405, "method not allowed");
      }
    }
    m = WEBHOOK.exec(call.path);
    if (m) {
      if (call.method !== "POST") refuse(405, "method not allowed");
      const userId = this.actingFor(token, m[1]!);
      const event = this.ownEvent(userId, m[2]!);
      const { types, config } = parseWebhookRegistration(jsonBody(call));
      for (const t of types) event.webhooks.set(t, config);
      return { status: 204 };
    }
    m = WEBHOOK_TYPE.exec(call.path);
    if (m) {
      if (call.method !== "DELETE") refuse(405, "method not allowed");
      const userId = this.actingFor(token, m[1]!);
      const event = this.ownEvent(userId, m[2]!);
      const type = decode(m[3]!);
      if (!(WEBHOOK_TYPES as readonly string[]).includes(type)) {
        refuse(400, "type must be EVENT_STATE or ATTENDEE_INFO");
      }
      noBody(call);
      // Removing a configuration that is not there leaves the same state: 204, as DELETE is.
      event.webhooks.delete(type as WebhookType);
      return { status: 204 };
    }
    refuse(404, "no such operation");
  }

  private grant(call: ServiceCall): Reply {
    const body = jsonBody(call);
    if (!isPlainObject(body)) refuse(400, "the body must be a JSON object");
    for (const k of Object.keys(body)) {
      if (k !== "grant_type" && k !== "properties") refuse(400, `unknown field "${k}"`);
    }
    const grant = body.grant_type;
    if (grant !== "user_app" && grant !== "enterprise_app") {
      refuse(400, "grant_type must be user_app or enterprise_app");
    }
    const props = body.properties;
    if (!isPlainObject(props)) refuse(400, "properties must be an object");
    for (const k of Object.keys(props)) {
      if (!["client_id", "client_secret", "user_email"].includes(k)) {
        refuse(400, `unknown properties field "${k}"`);
      }
    }
    const { client_id: id, client_secret: secret, user_email: email } = props;
    if (typeof id !== "string" || typeof secret !== "string") {
      refuse(400, "properties.client_id and properties.client_secret are required strings");
    }
    if (grant === "user_app" && (typeof email !== "string" || !EMAIL.test(email))) {
      refuse(400, "user_app needs properties.user_email, an e-mail address");
    }
    if (grant === "enterprise_app" && email !== undefined) {
      refuse(400, "enterprise_app takes no user_email");
    }
    const { clientId, clientSecret } = SANDBOX_SEEDS.events;
    // Both compared, always, so timing does not tell which one was wrong.
    const idOk = secretEquals(id, clientId);
    const secretOk = secretEquals(secret, clientSecret);
    if (!idOk || !secretOk) refuse(401, "unknown application key or secret");

    let userId: number | undefined;
    if (grant === "user_app") {
      const domain = EMAIL.exec(email as string)![1]!.toLowerCase();
      // Only example.com addresses are registered; any other is an unknown user (404).
      if (domain !== SANDBOX_USER_DOMAIN) refuse(404, "no registered user with that e-mail");
      userId = this.users.idFor(email as string);
    }
    const accessToken = randomToken(32);
    this.tokens.set(tokenKey(accessToken), {
      grant,
      userId,
      enterpriseId: SANDBOX_ENTERPRISE_ID,
      expiresAt: this.deps.now() + EVENTS_TOKEN_EXPIRES_IN * 1000,
    });
    return {
      status: 200,
      json: {
        access_token: accessToken,
        expires_in: EVENTS_TOKEN_EXPIRES_IN,
        ...(userId === undefined ? {} : { userId }),
        enterpriseId: SANDBOX_ENTERPRISE_ID,
      },
    };
  }

  private bearer(call: ServiceCall): EventsToken {
    const value = header(call.headers, "authorization");
    const m = value === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(value);
    if (!m) refuse(401, "a Bearer token is required");
    const token = this.liveToken(m[1]!);
    if (token === undefined) refuse(401, "unknown or expired token");
    return token;
  }

  /** The user a path names, if this token may act for them. */
  private actingFor(token: EventsToken, segment: string): number {
    if (!/^\d{1,15}$/.test(segment)) refuse(400, "userId must be a number");
    const userId = Number(segment);
    if (token.grant === "user_app") {
      if (token.userId !== userId) refuse(403, "a user token acts only for its own user");
    } else if (!this.users.has(userId)) {
      refuse(404, "no such user in this enterprise");
    }
    return userId;
  }

  private ownEvent(userId: number, segment: string): StoredEvent {
    const event = this.events.get(decode(segment));
    if (event === undefined || event.organizerId !== userId) refuse(404, "no such event");
    return event;
  }

  private create(userId: number, body: unknown): Reply {
    const given = parseEventFields(body, "create");
    const fields = { ...DEFAULT_FIELDS, ...given } as EventFields;
    checkEventInvariants(fields);
    const now = this.deps.now();
    let id = randomHex(8);
    while (this.events.has(id)) id = randomHex(8);
    this.events.set(id, {
      id,
      organizerId: userId,
      fields,
      created: now,
      lastModified: now,
      meetingNumericId: randomDigits(10),
      participantPasscode: randomDigits(4),
      attendeeMeetingNumericId: randomDigits(10),
      attendeeMeetingPasscode: randomDigits(4),
      webhooks: new Map(),
      live: { instanceId: null, state: "NOT_STARTED", attendees: new Map(), synthetic: 0 },
    });
    return { status: 201, json: { id } };
  }

  private edit(event: StoredEvent, body: unknown): Reply {
    const given = parseEventFields(body, "edit");
    const fields = { ...event.fields, ...given };
    checkEventInvariants(fields);
    event.fields = fields;
    // Strictly increasing even when the clock has not moved, so clients can see an edit landed.
    event.lastModified = Math.max(this.deps.now(), event.lastModified + 1);
    return { status: 204 };
  }
}

/** The JSON body of a call that must carry one. */
function jsonBody(call: ServiceCall): unknown {
  if (call.rawBody.length === 0) refuse(400, "a JSON body is required");
  if (!isJsonContentType(header(call.headers, "content-type"))) {
    refuse(415, "Content-Type must be application/json");
  }
  const body = parseJson(call.rawBody);
  if (body === undefined) refuse(400, "the body is not valid JSON");
  return body;
}

function noBody(call: ServiceCall): void {
  if (call.rawBody.length > 0) refuse(400, "this operation takes no body");
}
