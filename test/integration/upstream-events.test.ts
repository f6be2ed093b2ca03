import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  EventsError,
  UpstreamSchemaError,
  UpstreamTimeoutError,
} from "../../src/upstream/errors.ts";
import { createEventsClient, type EventsClient } from "../../src/upstream/events/client.ts";
import type { EventInput } from "../../src/upstream/events/schemas.ts";
import { createHttp, RETRY_POLICIES } from "../../src/upstream/http.ts";
import { json, startLocalServer } from "../unit/upstream/local-server.ts";
import { startUpstreamHarness, type UpstreamHarness } from "./upstream-harness.ts";

const APP = { clientId: "sandbox-key", clientSecret: "sandbox-secret" };
const HOUR = 60 * 60 * 1000;

let h: UpstreamHarness;
let events: EventsClient;
let eventsNoRetry: EventsClient;
let token: string;
let userId: number;
const secrets = new Set<string>(["sandbox-secret", "wrong-secret-93be1", "whsec-events-5d1c"]);

beforeAll(async () => {
  h = await startUpstreamHarness();
  events = createEventsClient({ baseUrl: h.sandbox.eventsBaseUrl, http: h.http });
  eventsNoRetry = createEventsClient({ baseUrl: h.sandbox.eventsBaseUrl, http: h.httpNoRetry });
  const g = await events.grantUserApp({ ...APP, email: "organizer@example.com" });
  token = g.accessToken;
  userId = g.userId;
  secrets.add(token);
});
afterAll(() => h.close());
afterEach(async () => {
  await h.clearFaults();
  await h.clearLog();
});

function input(overrides: Partial<EventInput> = {}): EventInput {
  const start = Date.now() + 24 * HOUR;
  return {
    title: "Town hall",
    description: "Quarterly all-hands",
    start,
    end: start + HOUR,
    timezone: "Europe/Paris",
    ...overrides,
  };
}

describe("events: token grants", () => {
  it("grants a user-app token with userId and enterpriseId", async () => {
    const g = await events.grantUserApp({ ...APP, email: "someone@example.com" });
    secrets.add(g.accessToken);
    expect(g).toEqual({
      accessToken: expect.any(String),
      expiresInSec: 3600,
      userId: expect.any(Number),
      enterpriseId: 1001,
    });
    const [entry] = await h.log();
    expect(entry).toMatchObject({
      path: "/api/security/v1/oauth/accesstoken",
      grantType: "user_app",
      status: 200,
    });
    expect(JSON.stringify(entry)).not.toContain("sandbox-secret");
  });

  it("grants an enterprise-app token without userId", async () => {
    const g = await events.grantEnterpriseApp(APP);
    secrets.add(g.accessToken);
    expect(g).toEqual({ accessToken: expect.any(String), expiresInSec: 3600, enterpriseId: 1001 });
    expect(g).not.toHaveProperty("userId");
  });

  it("refuses a wrong secret (401) and an unregistered e-mail (404) with fitting words", async () => {
    const bad = await h.failure(
      events.grantUserApp({ ...APP, clientSecret: "wrong-secret-93be1", email: "a@example.com" }),
    );
    expect(bad).toBeInstanceOf(EventsError);
    expect(bad).toMatchObject({ status: 401, attempts: 1 });
    expect((bad as EventsError).userMessage).toMatch(/app key and secret/);
    const stranger = await h.failure(events.grantUserApp({ ...APP, email: "a@elsewhere.org" }));
    expect(stranger).toMatchObject({ status: 404 });
    expect((stranger as EventsError).userMessage).toMatch(/e-mail/);
  });
});

describe("events: scheduling", () => {
  it("creates an event (201) and reads every field back, recurrence counts as numbers", async () => {
    const created = await events.createEvent(
      token,
      userId,
      input({
        restricted: true,
        requireEmail: true,
        enableAutoRecord: true,
        enablePSTN: true,
        enableChat: true,
        enableAttendeeRoster: true,
        enableQnA: true,
        enableQnAAnonymous: false,
        enableWaterMark: false,
        enableIntroOutro: false,
        customIntroOutro: false,
        recurrencePattern: {
          recurrenceType: "DAILY",
          endDate: null,
          recurrenceCount: 3,
          frequency: 1,
          daysOfWeekMask: 0,
          dayOfMonth: 0,
          weekOfMonth: "NONE",
        },
        panelists: ["panel@example.com"],
        moderators: ["mod@example.com"],
        attendees: [],
        panelistMessage: "Welcome, panelists",
        moderatorMessage: "Welcome, moderators",
        attendeeMessage: "Welcome",
      }),
    );
    expect(created.id).toMatch(/.+/);
    const [post] = await h.log();
    expect(post).toMatchObject({ method: "POST", status: 201 });
    const sent = post?.body as { recurrencePattern: Record<string, unknown> };
    expect(sent.recurrencePattern["recurrenceCount"]).toBe("3");
    expect(sent.recurrencePattern["frequency"]).toBe("1");

    const e = await events.getEvent(token, userId, created.id);
    expect(e).toMatchObject({
      id: created.id,
      title: "Town hall",
      timezone: "Europe/Paris",
      restricted: true,
      organizerId: userId,
      organizerEnterpriseId: 1001,
      status: "NOT_STARTED",
      panelists: ["panel@example.com"],
      recurrencePattern: {
        recurrenceType: "DAILY",
        recurrenceCount: 3,
        frequency: 1,
        endDate: null,
      },
      activeAttendeeCount: 0,
    });
    expect(typeof e.moderatorUrl).toBe("string");
    expect(Object.keys(e.dialInNumbers)).toEqual(expect.arrayContaining(["us"]));
  });

  it("edits with only the changed fields (204) and the change shows on GET", async () => {
    const { id } = await events.createEvent(token, userId, input());
    const before = await events.getEvent(token, userId, id);
    await h.clearLog();
    await events.editEvent(token, userId, id, { title: "Town hall (moved)", enableChat: false });
    const [put] = await h.log();
    expect(put).toMatchObject({
      method: "PUT",
      status: 204,
      body: { title: "Town hall (moved)", enableChat: false },
    });
    expect(Object.keys(put?.body as object)).toEqual(["title", "enableChat"]);
    const after = await events.getEvent(token, userId, id);
    expect(after.title).toBe("Town hall (moved)");
    expect(after.description).toBe(before.description);
    expect(after.lastModified).toBeGreaterThan(before.lastModified);
  });

  it("deletes (204); the event is then gone (404)", async () => {
    const { id } = await events.createEvent(token, userId, input());
    await events.deleteEvent(token, userId, id);
    const err = await h.failure(events.getEvent(token, userId, id));
    expect(err).toBeInstanceOf(EventsError);
    expect(err).toMatchObject({ status: 404, attempts: 1 });
    const again = await h.failure(events.deleteEvent(token, userId, id));
    expect(again).toMatchObject({ status: 404 });
  });

  it("rejects an invalid event (400) and a bad token (401) and another user's path (403)", async () => {
    const invalid = await h.failure(events.createEvent(token, userId, input({ end: 1, start: 2 })));
    expect(invalid).toMatchObject({ status: 400, name: "EventsError" });
    secrets.add("bogus-token-61f0");
    const unauth = await h.failure(events.getEvent("bogus-token-61f0", userId, "x"));
    expect(unauth).toMatchObject({ status: 401 });
    expect(JSON.stringify(unauth)).not.toContain("bogus-token-61f0");
    const forbidden = await h.failure(events.createEvent(token, userId + 1, input()));
    expect(forbidden).toMatchObject({ status: 403 });
  });
});

describe("events: webhooks", () => {
  it("registers (204) with its headers, re-registers, and removes each type (204)", async () => {
    const { id } = await events.createEvent(token, userId, input());
    await h.clearLog();
    const registration = {
      type: ["EVENT_STATE", "ATTENDEE_INFO"] as const,
      method: "POST" as const,
      headers: { "X-OnAir-Secret": "whsec-events-5d1c" },
      url: "https://onair.example.com/webhooks/events/sub-1",
    };
    await events.registerWebhook(token, userId, id, registration);
    await events.registerWebhook(token, userId, id, {
      ...registration,
      type: ["EVENT_STATE"],
      method: "PUT",
    });
    const [post] = await h.log();
    expect(post).toMatchObject({
      method: "POST",
      path: `/api/webhook/v1/users/${userId}/events/${id}`,
      status: 204,
      body: { type: ["EVENT_STATE", "ATTENDEE_INFO"], method: "POST", url: registration.url },
    });
    await events.removeWebhook(token, userId, id, "EVENT_STATE");
    await events.removeWebhook(token, userId, id, "ATTENDEE_INFO");
    const entries = await h.log();
    expect(entries.slice(-2).map((e) => [e.method, e.path.split("/").pop(), e.status])).toEqual([
      ["DELETE", "EVENT_STATE", 204],
      ["DELETE", "ATTENDEE_INFO", 204],
    ]);
  });

  it("refuses a webhook for an unknown event (404)", async () => {
    const err = await h.failure(
      events.registerWebhook(token, userId, "no-such-event", {
        type: ["EVENT_STATE"],
        method: "POST",
        headers: {},
        url: "https://onair.example.com/webhooks/events/sub-2",
      }),
    );
    expect(err).toMatchObject({ status: 404, name: "EventsError" });
  });
});

describe("events: faults by status", () => {
  it.each([400, 401, 403, 404, 409, 429, 500, 502, 503, 504])(
    "maps an injected %i to an EventsError with plain words",
    async (status) => {
      await h.addFault({ service: "events", status });
      const err = await h.failure(eventsNoRetry.getEvent(token, userId, "any"), `events ${status}`);
      expect(err).toBeInstanceOf(EventsError);
      const e = err as EventsError;
      expect(e).toMatchObject({ status, service: "events", code: "upstream_events_error" });
      expect(e.userMessage).toMatch(/^The live events service .+\./);
      if (status === 500) expect(e.userMessage).toMatch(/contact the service operator/);
    },
  );

  it("retries a GET through two 503s and succeeds", async () => {
    const { id } = await events.createEvent(token, userId, input());
    await h.clearLog();
    await h.addFault({ service: "events", status: 503, times: 2 });
    const e = await events.getEvent(token, userId, id);
    expect(e.id).toBe(id);
    expect((await h.log()).map((x) => [x.method, x.status])).toEqual([
      ["GET", 503],
      ["GET", 503],
      ["GET", 200],
    ]);
  });

  it("does not resend a create that failed with 503", async () => {
    await h.addFault({ service: "events", status: 503, times: 2 });
    const err = await h.failure(events.createEvent(token, userId, input()));
    expect(err).toMatchObject({ status: 503, attempts: 1 });
    expect(await h.log()).toHaveLength(1);
  });

  it("accepts a 404 on a retried delete whose first answer was lost", async () => {
    const { id } = await events.createEvent(token, userId, input());
    // Attempt 1 times out at 100 ms; the sandbox still deletes at 200 ms; the retry at 400 ms
    // finds nothing left to delete (404), which is what the caller wanted.
    const patient = createEventsClient({
      baseUrl: h.sandbox.eventsBaseUrl,
      http: createHttp({
        retryPolicy: { ...RETRY_POLICIES.fast, retries: 1, baseMs: 800, maxMs: 800 },
        random: () => 0,
        timeouts: { attemptMs: 100 },
        logger: h.scanner.logger,
      }),
    });
    await h.addFault({ service: "events", delayMs: 200 });
    await patient.deleteEvent(token, userId, id);
    const deletes = (await h.log()).filter((e) => e.method === "DELETE");
    expect(deletes.map((e) => e.status)).toEqual([204, 404]);
    expect(await h.failure(events.getEvent(token, userId, id))).toMatchObject({ status: 404 });
  });

  it("turns a delay beyond the timeout into a timeout error", async () => {
    const slow = createEventsClient({
      baseUrl: h.sandbox.eventsBaseUrl,
      http: createHttp({
        retryPolicy: RETRY_POLICIES.none,
        timeouts: { attemptMs: 100 },
        logger: h.scanner.logger,
      }),
    });
    await h.addFault({ service: "events", delayMs: 2_000 });
    const err = await h.failure(slow.getEvent(token, userId, "any"), "events timeout");
    expect(err).toBeInstanceOf(UpstreamTimeoutError);
    expect((err as UpstreamTimeoutError).userMessage).toMatch(/took too long/);
  });
});

describe("events: answers the sandbox never sends", async () => {
  const server = await startLocalServer((r, res) => {
    if (r.url.includes("oauth"))
      json(res, 200, {
        access_token: "tok-local-2",
        expires_in: "3600",
        userId: 7,
        enterpriseId: 1,
      });
    else json(res, 200, { id: "e1", title: "x" });
  });
  afterAll(() => server.close());
  const local = () => createEventsClient({ baseUrl: server.url, http: h.httpNoRetry });

  it("names expires_in when it is not a number", async () => {
    secrets.add("tok-local-2");
    const err = await h.failure(local().grantUserApp({ ...APP, email: "a@example.com" }));
    expect(err).toBeInstanceOf(UpstreamSchemaError);
    expect((err as UpstreamSchemaError).issues.map((i) => i.path)).toEqual(["expires_in"]);
  });

  it("names the missing fields of a thin Event", async () => {
    const err = await h.failure(local().getEvent("t", 7, "e1"));
    const paths = (err as UpstreamSchemaError).issues.map((i) => i.path);
    expect(paths).toEqual(
      expect.arrayContaining(["description", "start", "status", "dialInNumbers"]),
    );
    expect(paths).not.toContain("title");
  });
});

describe("events: secrets", () => {
  it("leaked no credential into any log line, error message or serialised error", () => {
    expect(h.scanner.texts.some((t) => t.where === "log")).toBe(true);
    h.scanner.assertNoSecrets([...secrets]);
  });
});
