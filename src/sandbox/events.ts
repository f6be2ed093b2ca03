/**
 * The embedded live events service (spec/live-events-service.md), in memory: tokens, events and
 * webhook registrations, its operations as a table by path and method. What each accepts is
 * checked by its own schemas (events-schemas.ts).
 */
import type { z } from "zod";
import {
  type EventsToken,
  type SavedEventsState,
  type StoredEvent,
  Users,
} from "./events-records.ts";
import {
  DEFAULT_FIELDS,
  EventCreate,
  EventEdit,
  type EventFields,
  emailDomain,
  TokenRequest,
  validate,
  WebhookRegistration,
  WebhookTypeSegment,
} from "./events-schemas.ts";
import {
  acceptsJson,
  header,
  isJsonContentType,
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

/** The body checked against `schema`, or a 400 with the first problem as its reason. */
function checked<T extends z.ZodType>(schema: T, body: unknown): z.output<T> {
  const r = validate(schema, body);
  if (!r.ok) refuse(400, r.reason);
  return r.data;
}

function checkEventInvariants(f: EventFields): void {
  if (f.end <= f.start) refuse(400, "end must be after start");
  const endDate = f.recurrencePattern?.endDate;
  if (endDate !== undefined && endDate !== null && endDate < f.start) {
    refuse(400, "recurrencePattern.endDate must not be before start");
  }
}

const DAY_MS = 24 * 60 * 60 * 1000;

export const TOKEN_PATH = "/api/security/v1/oauth/accesstoken";

/** One operation: its call, the token's grant, and its path's segments. */
type Operation = (call: ServiceCall, token: EventsToken, segments: string[]) => Reply;

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

  /**
   * The operations behind a token, by path and method. Each names its path's segments
   * (`[user, event, type]`, raw: actingFor, ownEvent and decode read them).
   */
  private readonly operations: ReadonlyArray<{
    readonly path: RegExp;
    readonly methods: Readonly<Record<string, Operation>>;
  }> = [
    {
      path: /^\/api\/scheduling\/v1\/users\/([^/]+)\/events$/,
      methods: {
        POST: (call, token, [user]) => this.create(this.actingFor(token, user!), jsonBody(call)),
      },
    },
    {
      path: /^\/api\/scheduling\/v1\/users\/([^/]+)\/events\/([^/]+)$/,
      methods: {
        GET: (call, token, [user, event]) => {
          const found = this.ownEvent(this.actingFor(token, user!), event!);
          noBody(call);
          return { status: 200, json: this.view(found) };
        },
        PUT: (call, token, [user, event]) =>
          this.edit(this.ownEvent(this.actingFor(token, user!), event!), jsonBody(call)),
        DELETE: (call, token, [user, event]) => {
          const found = this.ownEvent(this.actingFor(token, user!), event!);
          noBody(call);
          this.events.delete(found.id);
          return { status: 204 };
        },
      },
    },
    {
      path: /^\/api\/webhook\/v1\/users\/([^/]+)\/events\/([^/]+)$/,
      methods: {
        POST: (call, token, [user, event]) => {
          const found = this.ownEvent(this.actingFor(token, user!), event!);
          const { types, config } = checked(WebhookRegistration, jsonBody(call));
          for (const t of types) found.webhooks.set(t, config);
          return { status: 204 };
        },
      },
    },
    {
      path: /^\/api\/webhook\/v1\/users\/([^/]+)\/events\/([^/]+)\/type\/([^/]+)$/,
      methods: {
        DELETE: (call, token, [user, event, type]) => {
          const found = this.ownEvent(this.actingFor(token, user!), event!);
          const which = checked(WebhookTypeSegment, decode(type!));
          noBody(call);
          // Removing a configuration that is not there leaves the same state: 204, as DELETE is.
          found.webhooks.delete(which);
          return { status: 204 };
        },
      },
    },
  ];

  private route(call: ServiceCall): Reply {
    if (!acceptsJson(header(call.headers, "accept"))) refuse(406, "Accept must admit JSON");
    // The one operation without a token: the one that grants it.
    if (call.path === TOKEN_PATH) {
      if (call.method !== "POST") refuse(405, "the token endpoint takes POST");
      return this.grant(call);
    }
    const token = this.bearer(call);
    for (const { path, methods } of this.operations) {
      const m = path.exec(call.path);
      if (m === null) continue;
      const operation = methods[call.method];
      if (operation === undefined) refuse(405, `${call.method} is not allowed here`);
      return operation(call, token, m.slice(1));
    }
    refuse(404, "no such operation");
  }

  private grant(call: ServiceCall): Reply {
    const body = checked(TokenRequest, jsonBody(call));
    const { clientId, clientSecret } = SANDBOX_SEEDS.events;
    // Both compared, always, so timing does not tell which one was wrong.
    const idOk = secretEquals(body.properties.client_id, clientId);
    const secretOk = secretEquals(body.properties.client_secret, clientSecret);
    if (!idOk || !secretOk) refuse(401, "unknown application key or secret");

    let userId: number | undefined;
    if (body.grant_type === "user_app") {
      const email = body.properties.user_email;
      // Only example.com addresses are registered; any other is an unknown user (404).
      if (emailDomain(email) !== SANDBOX_USER_DOMAIN)
        refuse(404, "no registered user with that e-mail");
      userId = this.users.idFor(email);
    }
    const accessToken = randomToken(32);
    this.tokens.set(tokenKey(accessToken), {
      grant: body.grant_type,
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
    const fields = { ...DEFAULT_FIELDS, ...checked(EventCreate, body) } as EventFields;
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
    const fields = { ...event.fields, ...checked(EventEdit, body) } as EventFields;
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
