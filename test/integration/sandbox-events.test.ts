import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SandboxServer, startSandboxServer } from "../../src/sandbox/index.ts";

let clock = 1_800_000_000_000;
let server: SandboxServer;
let base: string;

beforeAll(async () => {
  server = await startSandboxServer({ now: () => clock });
  base = server.eventsBaseUrl;
});
afterAll(() => server.close());

const TOKEN_URL = () => `${base}/api/security/v1/oauth/accesstoken`;
const JSON_HEADERS = { "content-type": "application/json", accept: "application/json" };

function tokenRequest(body: unknown, headers: Record<string, string> = JSON_HEADERS) {
  return fetch(TOKEN_URL(), {
    method: "POST",
    headers,
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

const props = (extra: Record<string, unknown> = {}) => ({
  client_id: "sandbox-key",
  client_secret: "sandbox-secret",
  ...extra,
});

interface Grant {
  token: string;
  userId: number;
}

async function userGrant(email: string): Promise<Grant> {
  const res = await tokenRequest({
    grant_type: "user_app",
    properties: props({ user_email: email }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { access_token: string; userId: number };
  return { token: body.access_token, userId: body.userId };
}

async function enterpriseToken(): Promise<string> {
  const res = await tokenRequest({ grant_type: "enterprise_app", properties: props() });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

function call(method: string, path: string, token: string | undefined, body?: unknown) {
  const headers: Record<string, string> = { accept: "application/json" };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  return fetch(`${base}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
}

/** Errors of this service carry no body (spec: detailed error responses are not supported). */
async function expectBare(res: Response, status: number) {
  expect(res.status).toBe(status);
  expect(await res.text()).toBe("");
}

const HOUR = 3600 * 1000;
const minimalEvent = () => ({ title: "Town hall", start: clock + HOUR, end: clock + 2 * HOUR });

async function createEvent(g: Grant, body: unknown = minimalEvent()): Promise<string> {
  const res = await call("POST", `/api/scheduling/v1/users/${g.userId}/events`, g.token, body);
  expect(res.status).toBe(201);
  const created = (await res.json()) as { id: string };
  expect(Object.keys(created)).toEqual(["id"]);
  expect(typeof created.id).toBe("string");
  return created.id;
}

async function getEvent(g: Grant, id: string): Promise<Record<string, unknown>> {
  const res = await call("GET", `/api/scheduling/v1/users/${g.userId}/events/${id}`, g.token);
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

describe("events sandbox: token grants", () => {
  it("user_app answers access_token, expires_in (s), userId and enterpriseId", async () => {
    const res = await tokenRequest({
      grant_type: "user_app",
      properties: props({ user_email: "ada@example.com" }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(
      ["access_token", "enterpriseId", "expires_in", "userId"].sort(),
    );
    expect(body.expires_in).toBe(3600);
    expect(body.enterpriseId).toBe(1001);
    expect(Number.isInteger(body.userId)).toBe(true);
  });

  it("a userId is stable per address, case-insensitively, and differs between addresses", async () => {
    const a = await userGrant("grace@example.com");
    const b = await userGrant("Grace@EXAMPLE.com");
    const c = await userGrant("linus@example.com");
    expect(b.userId).toBe(a.userId);
    expect(c.userId).not.toBe(a.userId);
    expect(b.token).not.toBe(a.token);
  });

  it("enterprise_app answers without userId", async () => {
    const res = await tokenRequest({ grant_type: "enterprise_app", properties: props() });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(["access_token", "enterpriseId", "expires_in"].sort());
  });

  it.each([
    [
      "wrong secret",
      401,
      { grant_type: "enterprise_app", properties: props({ client_secret: "x" }) },
    ],
    ["wrong key", 401, { grant_type: "enterprise_app", properties: props({ client_id: "x" }) }],
    [
      "missing secret",
      400,
      { grant_type: "enterprise_app", properties: { client_id: "sandbox-key" } },
    ],
    [
      "secret of wrong type",
      400,
      { grant_type: "enterprise_app", properties: props({ client_secret: 1 }) },
    ],
    ["bad grant_type", 400, { grant_type: "password", properties: props() }],
    ["no grant_type", 400, { properties: props() }],
    ["no properties", 400, { grant_type: "enterprise_app" }],
    ["user_app without user_email", 400, { grant_type: "user_app", properties: props() }],
    [
      "user_app with a non-address",
      400,
      { grant_type: "user_app", properties: props({ user_email: "bob" }) },
    ],
    [
      "enterprise_app with user_email",
      400,
      { grant_type: "enterprise_app", properties: props({ user_email: "a@example.com" }) },
    ],
    ["an unknown field", 400, { grant_type: "enterprise_app", properties: props(), scope: "all" }],
    ["not an object", 400, "[1,2]"],
    ["not JSON", 400, "{grant_type"],
    [
      "an address outside example.com",
      404,
      { grant_type: "user_app", properties: props({ user_email: "eve@example.org" }) },
    ],
  ])("%s → %i, no body", async (_name, status, body) => {
    await expectBare(await tokenRequest(body), status);
  });

  it("needs Content-Type application/json", async () => {
    await expectBare(
      await tokenRequest(
        { grant_type: "enterprise_app", properties: props() },
        { "content-type": "text/plain" },
      ),
      415,
    );
  });
});

describe("events sandbox: Bearer authentication and scope", () => {
  it("missing, malformed, unknown and expired tokens are 401 with no body", async () => {
    const g = await userGrant("auth@example.com");
    const path = `/api/scheduling/v1/users/${g.userId}/events`;
    await expectBare(await call("POST", path, undefined, minimalEvent()), 401);
    await expectBare(await call("POST", path, "not-a-token", minimalEvent()), 401);
    const basic = await fetch(`${base}${path}`, {
      method: "POST",
      headers: { authorization: `Basic ${g.token}`, "content-type": "application/json" },
      body: JSON.stringify(minimalEvent()),
    });
    await expectBare(basic, 401);
    expect((await call("POST", path, g.token, minimalEvent())).status).toBe(201);
    clock += 3600 * 1000;
    await expectBare(await call("POST", path, g.token, minimalEvent()), 401);
  });

  it("a user token acts only for its own user (403); an enterprise token for any user (unknown: 404)", async () => {
    const ann = await userGrant("ann-scope@example.com");
    const bob = await userGrant("bob-scope@example.com");
    await expectBare(
      await call(
        "POST",
        `/api/scheduling/v1/users/${bob.userId}/events`,
        ann.token,
        minimalEvent(),
      ),
      403,
    );
    const ent = await enterpriseToken();
    const res = await call(
      "POST",
      `/api/scheduling/v1/users/${bob.userId}/events`,
      ent,
      minimalEvent(),
    );
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    expect((await getEvent(bob, id)).organizerId).toBe(bob.userId);
    await expectBare(
      await call("POST", "/api/scheduling/v1/users/123/events", ent, minimalEvent()),
      404,
    );
    await expectBare(
      await call("POST", "/api/scheduling/v1/users/abc/events", ent, minimalEvent()),
      400,
    );
  });

  it("an event is reachable only under its organizer's userId", async () => {
    const ann = await userGrant("ann-own@example.com");
    const bob = await userGrant("bob-own@example.com");
    const id = await createEvent(ann);
    const ent = await enterpriseToken();
    await expectBare(
      await call("GET", `/api/scheduling/v1/users/${bob.userId}/events/${id}`, ent),
      404,
    );
    expect(
      (await call("GET", `/api/scheduling/v1/users/${ann.userId}/events/${id}`, ent)).status,
    ).toBe(200);
  });
});

describe("events sandbox: scheduling", () => {
  it("GET answers every field of the spec's get response, with defaults", async () => {
    const g = await userGrant("fields@example.com");
    const created = clock;
    const id = await createEvent(g);
    const e = await getEvent(g, id);
    const requestFields = [
      "title",
      "description",
      "start",
      "end",
      "timezone",
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
      "recurrencePattern",
      "panelists",
      "moderators",
      "attendees",
      "panelistMessage",
      "moderatorMessage",
      "attendeeMessage",
    ];
    const responseFields = [
      "id",
      "organizerId",
      "organizerEnterpriseId",
      "created",
      "lastModified",
      "meetingNumericId",
      "status",
      "requireRegistration",
      "enterpriseOnly",
      "enableOnPrem",
      "recordingsAvailable",
      "participantPasscode",
      "attendeeMeetingNumericId",
      "attendeeMeetingPasscode",
      "moderatorUrl",
      "panelistUrl",
      "attendeeUrl",
      "recurrenceStart",
      "recurrenceEnd",
      "recurrenceEndNever",
      "activeAttendeeCount",
      "dialInNumbers",
      "subscriptionId",
      "planId",
      "billingType",
      "billingEditable",
    ];
    expect(Object.keys(e).sort()).toEqual([...requestFields, ...responseFields].sort());
    expect(e).toMatchObject({
      id,
      title: "Town hall",
      description: "",
      timezone: "UTC",
      restricted: false,
      enableChat: false,
      recurrencePattern: null,
      panelists: [],
      organizerId: g.userId,
      organizerEnterpriseId: 1001,
      created,
      lastModified: created,
      status: "NOT_STARTED",
      activeAttendeeCount: 0,
      recurrenceStart: e.start,
      recurrenceEnd: e.end,
      recurrenceEndNever: false,
      billingType: "FREETRIAL",
      billingEditable: false,
      requireRegistration: false,
      recordingsAvailable: false,
    });
    for (const k of ["meetingNumericId", "attendeeMeetingNumericId", "participantPasscode"]) {
      expect(e[k]).toMatch(/^\d+$/);
    }
    for (const k of ["moderatorUrl", "panelistUrl", "attendeeUrl"]) {
      expect(typeof e[k]).toBe("string");
      expect(e[k]).not.toMatch(/^[a-z]+:\/\//);
    }
    expect(Object.keys(e.dialInNumbers as object).sort()).toEqual(
      ["alternate", "us", "us_tollfree"].sort(),
    );
    for (const k of ["subscriptionId", "planId"]) expect(typeof e[k]).toBe("string");
  });

  it("echoes every request field given on create", async () => {
    const g = await userGrant("echo@example.com");
    const body = {
      title: "All hands",
      description: "Q3",
      start: clock + HOUR,
      end: clock + 3 * HOUR,
      timezone: "Europe/Paris",
      restricted: true,
      requireEmail: true,
      enableAutoRecord: true,
      enablePSTN: true,
      enableChat: true,
      enableAttendeeRoster: true,
      enableQnA: true,
      enableQnAAnonymous: true,
      enableWaterMark: true,
      enableIntroOutro: true,
      customIntroOutro: true,
      panelists: ["p@example.com"],
      moderators: [{ email: "m@example.com" }],
      attendees: [],
      panelistMessage: "hi panelists",
      moderatorMessage: "hi moderators",
      attendeeMessage: "hi all",
    };
    const e = await getEvent(g, await createEvent(g, body));
    expect(e).toMatchObject({ ...body, recurrencePattern: null });
  });

  it("recurrencePattern: counts sent as strings come back as numbers, with the defaults", async () => {
    const g = await userGrant("recur@example.com");
    const start = clock + HOUR;
    const id = await createEvent(g, {
      ...minimalEvent(),
      recurrencePattern: { recurrenceType: "DAILY", recurrenceCount: "5", frequency: "2" },
    });
    const e = await getEvent(g, id);
    expect(e.recurrencePattern).toEqual({
      recurrenceType: "DAILY",
      endDate: null,
      recurrenceCount: 5,
      frequency: 2,
      daysOfWeekMask: 0,
      dayOfMonth: 0,
      weekOfMonth: "NONE",
    });
    expect(e.recurrenceStart).toBe(start);
    expect(e.recurrenceEnd).toBe(start + HOUR + 4 * 2 * 24 * HOUR);
  });

  it.each([
    ["title of wrong type", { title: 42 }],
    ["empty title", { title: " " }],
    ["boolean as string", { enableChat: "true" }],
    ["start as string", { start: String(Date.now()) }],
    ["start not an integer", { start: 1.5 }],
    ["unknown field", { enableQnaAnonymous: true }],
    ["null description", { description: null }],
    ["people not an array", { panelists: "a@example.com" }],
    ["people of wrong element type", { panelists: [1] }],
    ["bad time zone", { timezone: "Mars/Olympus" }],
    ["end before start", { end: 0 }],
    [
      "count as a number",
      { recurrencePattern: { recurrenceType: "DAILY", recurrenceCount: 5, frequency: "1" } },
    ],
    [
      "unknown recurrence type",
      { recurrencePattern: { recurrenceType: "WEEKLY", recurrenceCount: "5", frequency: "1" } },
    ],
    [
      "count and endDate",
      {
        recurrencePattern: {
          recurrenceType: "DAILY",
          recurrenceCount: "5",
          frequency: "1",
          endDate: 1,
        },
      },
    ],
    ["no end to the pattern", { recurrencePattern: { recurrenceType: "DAILY", frequency: "1" } }],
    [
      "zero frequency",
      { recurrencePattern: { recurrenceType: "DAILY", recurrenceCount: "3", frequency: "0" } },
    ],
  ])("create with %s → 400, no body", async (_name, override) => {
    const g = await userGrant("strict@example.com");
    await expectBare(
      await call("POST", `/api/scheduling/v1/users/${g.userId}/events`, g.token, {
        ...minimalEvent(),
        ...override,
      }),
      400,
    );
  });

  it.each(["title", "start", "end"])("create without %s → 400", async (field) => {
    const g = await userGrant("required@example.com");
    const body: Record<string, unknown> = minimalEvent();
    delete body[field];
    await expectBare(
      await call("POST", `/api/scheduling/v1/users/${g.userId}/events`, g.token, body),
      400,
    );
  });

  it("create with a non-JSON body or content type is refused", async () => {
    const g = await userGrant("nonjson@example.com");
    const path = `/api/scheduling/v1/users/${g.userId}/events`;
    await expectBare(await call("POST", path, g.token, "{title:"), 400);
    await expectBare(
      await fetch(`${base}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${g.token}`, "content-type": "text/plain" },
        body: JSON.stringify(minimalEvent()),
      }),
      415,
    );
    await expectBare(
      await fetch(`${base}${path}`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${g.token}`,
          "content-type": "application/json",
          accept: "text/html",
        },
        body: JSON.stringify(minimalEvent()),
      }),
      406,
    );
  });

  it("edit is partial: 204, only the given fields change, lastModified moves on", async () => {
    const g = await userGrant("edit@example.com");
    const id = await createEvent(g, {
      ...minimalEvent(),
      description: "keep me",
      enableChat: true,
    });
    const before = await getEvent(g, id);
    clock += 60_000;
    const res = await call("PUT", `/api/scheduling/v1/users/${g.userId}/events/${id}`, g.token, {
      title: "Renamed",
    });
    await expectBare(res, 204);
    const after = await getEvent(g, id);
    expect(after.title).toBe("Renamed");
    expect(after.lastModified).toBe(clock);
    expect(after.created).toBe(before.created);
    const { title: _t1, lastModified: _l1, ...restBefore } = before;
    const { title: _t2, lastModified: _l2, ...restAfter } = after;
    expect(restAfter).toEqual(restBefore);
  });

  it("edit validates like create, and a refused edit changes nothing", async () => {
    const g = await userGrant("edit-strict@example.com");
    const id = await createEvent(g);
    const before = await getEvent(g, id);
    const path = `/api/scheduling/v1/users/${g.userId}/events/${id}`;
    await expectBare(await call("PUT", path, g.token, { title: 1 }), 400);
    await expectBare(await call("PUT", path, g.token, { title: "x", bogus: 1 }), 400);
    await expectBare(await call("PUT", path, g.token, { end: before.start }), 400);
    await expectBare(await call("PUT", path, g.token, ["title"]), 400);
    expect(await getEvent(g, id)).toEqual(before);
    await expectBare(
      await call("PUT", path, g.token, {
        recurrencePattern: { recurrenceType: "DAILY", recurrenceCount: "3", frequency: "1" },
      }),
      204,
    );
    expect(
      ((await getEvent(g, id)).recurrencePattern as { recurrenceCount: number }).recurrenceCount,
    ).toBe(3);
  });

  it("delete: 204, then the event is 404 for get, edit, delete and webhooks", async () => {
    const g = await userGrant("delete@example.com");
    const id = await createEvent(g);
    const path = `/api/scheduling/v1/users/${g.userId}/events/${id}`;
    await expectBare(await call("DELETE", path, g.token), 204);
    await expectBare(await call("GET", path, g.token), 404);
    await expectBare(await call("PUT", path, g.token, { title: "x" }), 404);
    await expectBare(await call("DELETE", path, g.token), 404);
    await expectBare(
      await call("POST", `/api/webhook/v1/users/${g.userId}/events/${id}`, g.token, {
        type: ["EVENT_STATE"],
        method: "POST",
        headers: {},
        url: "http://127.0.0.1:1/hook",
      }),
      404,
    );
  });

  it("an unknown path is 404 and a wrong method 405, both without body", async () => {
    const g = await userGrant("paths@example.com");
    await expectBare(
      await call("GET", `/api/scheduling/v1/users/${g.userId}/upcoming`, g.token),
      404,
    );
    await expectBare(
      await call("GET", `/api/scheduling/v1/users/${g.userId}/events`, g.token),
      405,
    );
    await expectBare(await call("GET", "/api/security/v1/oauth/accesstoken", undefined), 405);
    const id = await createEvent(g);
    await expectBare(
      await call("PATCH", `/api/scheduling/v1/users/${g.userId}/events/${id}`, g.token, {}),
      405,
    );
    await expectBare(
      await call("GET", `/api/webhook/v1/users/${g.userId}/events/${id}/type/EVENT_STATE`, g.token),
      405,
    );
  });
});

describe("events sandbox: webhook registration", () => {
  const registration = {
    type: ["EVENT_STATE", "ATTENDEE_INFO"],
    method: "POST",
    headers: { "X-Onair-Secret": "s3cr3t" },
    url: "https://hooks.example.com/webhooks/events/sub1",
  };

  it("registers (204) and removes per type (204)", async () => {
    const g = await userGrant("hooks@example.com");
    const id = await createEvent(g);
    const path = `/api/webhook/v1/users/${g.userId}/events/${id}`;
    await expectBare(await call("POST", path, g.token, registration), 204);
    await expectBare(await call("DELETE", `${path}/type/EVENT_STATE`, g.token), 204);
    await expectBare(await call("DELETE", `${path}/type/ATTENDEE_INFO`, g.token), 204);
    await expectBare(await call("DELETE", `${path}/type/EVERYTHING`, g.token), 400);
    await expectBare(await call("DELETE", `${path}/type/EVENT_STATE`, undefined), 401);
  });

  it.each([
    ["empty type", { type: [] }],
    ["unknown type", { type: ["EVENT_STATE", "CHAT"] }],
    ["type not an array", { type: "EVENT_STATE" }],
    ["GET method", { method: "GET" }],
    ["lower-case method", { method: "post" }],
    ["relative url", { url: "/webhooks/events/1" }],
    ["non-http url", { url: "ftp://example.com/x" }],
    ["missing url", { url: undefined }],
    ["headers not a map of strings", { headers: { "X-A": 1 } }],
    ["header value with a line break", { headers: { "X-A": "a\r\nX-B: b" } }],
    ["framing header", { headers: { "Content-Length": "5" } }],
    ["unknown field", { secret: "x" }],
  ])("%s → 400", async (_name, override) => {
    const g = await userGrant("hooks-strict@example.com");
    const id = await createEvent(g);
    await expectBare(
      await call("POST", `/api/webhook/v1/users/${g.userId}/events/${id}`, g.token, {
        ...registration,
        ...override,
      }),
      400,
    );
  });
});
