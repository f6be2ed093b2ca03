import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { Agent, type Dispatcher } from "undici";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/log.ts";
import {
  type AttendeesResult,
  createSandbox,
  SandboxControlError,
  type SandboxServer,
  type StateResult,
  startSandboxServer,
} from "../../src/sandbox/index.ts";
import { RELAY_ERROR_CATALOG, RELAY_ERROR_NAMES } from "../../src/upstream/relay/catalog.ts";

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** A real webhook receiver: records every request and answers `status`. */
async function startReceiver() {
  const received: Received[] = [];
  const state = { status: 204 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: JSON.parse(Buffer.concat(chunks).toString("utf8")),
      });
      res.writeHead(state.status).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    received,
    state,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Counts what goes through it, so a test can see the injected dispatcher is the one used. */
class CountingAgent extends Agent {
  dispatched = 0;
  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler) {
    this.dispatched += 1;
    return super.dispatch(options, handler);
  }
}

const clock = 1_800_000_000_000;
const logLines: string[] = [];
const logger = createLogger({
  level: "trace",
  destination: new Writable({
    write(chunk, _enc, cb) {
      logLines.push(String(chunk));
      cb();
    },
  }),
});
const agent = new CountingAgent();
let server: SandboxServer;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let control: string;

beforeAll(async () => {
  server = await startSandboxServer({ now: () => clock, dispatcher: agent, logger });
  control = `${server.origin}/_sandbox/control`;
  receiver = await startReceiver();
});
afterAll(async () => {
  await server.close();
  await receiver.close();
  await agent.close();
});
beforeEach(async () => {
  receiver.received.length = 0;
  receiver.state.status = 204;
  await fetch(`${control}/faults`, { method: "DELETE" });
});

const BASIC = `Basic ${Buffer.from("sandbox:sandbox").toString("base64")}`;
const SECRET_HEADER = "hook-secret-3f9a1c";

async function grant(email: string) {
  const res = await fetch(`${server.eventsBaseUrl}/api/security/v1/oauth/accesstoken`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      grant_type: "user_app",
      properties: { client_id: "sandbox-key", client_secret: "sandbox-secret", user_email: email },
    }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { access_token: string; userId: number };
  return { token: body.access_token, userId: body.userId };
}

async function scheduledEvent(
  email: string,
  hook: { method: "POST" | "PUT"; types?: string[] } | undefined,
) {
  const g = await grant(email);
  const headers = { authorization: `Bearer ${g.token}`, "content-type": "application/json" };
  const res = await fetch(`${server.eventsBaseUrl}/api/scheduling/v1/users/${g.userId}/events`, {
    method: "POST",
    headers,
    body: JSON.stringify({ title: "Live", start: clock + 1000, end: clock + 3_600_000 }),
  });
  expect(res.status).toBe(201);
  const { id } = (await res.json()) as { id: string };
  if (hook !== undefined) {
    const reg = await fetch(
      `${server.eventsBaseUrl}/api/webhook/v1/users/${g.userId}/events/${id}`,
      {
        method: "POST",
        headers,
        body: JSON.stringify({
          type: hook.types ?? ["EVENT_STATE", "ATTENDEE_INFO"],
          method: hook.method,
          headers: { "X-Onair-Secret": SECRET_HEADER },
          url: `${receiver.url}/webhooks/events/${id}`,
        }),
      },
    );
    expect(reg.status).toBe(204);
  }
  const get = async () =>
    (await (
      await fetch(`${server.eventsBaseUrl}/api/scheduling/v1/users/${g.userId}/events/${id}`, {
        headers: { authorization: `Bearer ${g.token}` },
      })
    ).json()) as { status: string; activeAttendeeCount: number };
  return { id, grant: g, get };
}

function post(path: string, body: unknown) {
  return fetch(`${control}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

describe("sandbox control: EVENT_STATE", () => {
  it("delivers with the registered method and headers, and status follows", async () => {
    const e = await scheduledEvent("state@example.com", { method: "PUT" });
    expect((await e.get()).status).toBe("NOT_STARTED");
    const res = await post(`/events/${e.id}/state`, { state: "PREP_EVENT" });
    expect(res.status).toBe(200);
    const result = (await res.json()) as StateResult;
    expect(result.deliveries).toHaveLength(1);
    expect(result.deliveries[0]).toMatchObject({ status: 204, ok: true, method: "PUT" });
    expect(receiver.received).toHaveLength(1);
    const got = receiver.received[0]!;
    expect(got.method).toBe("PUT");
    expect(got.url).toBe(`/webhooks/events/${e.id}`);
    expect(got.headers["x-onair-secret"]).toBe(SECRET_HEADER);
    expect(got.headers["content-type"]).toBe("application/json");
    expect(got.body).toEqual({
      eventId: e.id,
      instanceId: result.instanceId,
      type: "EVENT_STATE",
      info: { state: "PREP_EVENT" },
    });
    expect((await e.get()).status).toBe("PREP_EVENT");

    await post(`/events/${e.id}/state`, { state: "IN_EVENT" });
    expect((await e.get()).status).toBe("IN_EVENT");
    expect((receiver.received[1]!.body as { instanceId: string }).instanceId).toBe(
      result.instanceId,
    );
    expect(agent.dispatched).toBeGreaterThanOrEqual(2);
  });

  it("without an EVENT_STATE configuration nothing is sent, but the state moves", async () => {
    const e = await scheduledEvent("state-nohook@example.com", {
      method: "POST",
      types: ["ATTENDEE_INFO"],
    });
    const result = (await (
      await post(`/events/${e.id}/state`, { state: "IN_EVENT" })
    ).json()) as StateResult;
    expect(result.deliveries).toEqual([]);
    expect(receiver.received).toHaveLength(0);
    expect((await e.get()).status).toBe("IN_EVENT");
  });

  it("reports a receiver's failure and an unreachable receiver", async () => {
    const e = await scheduledEvent("state-fail@example.com", { method: "POST" });
    receiver.state.status = 500;
    const failed = (await (
      await post(`/events/${e.id}/state`, { state: "PREP_EVENT" })
    ).json()) as StateResult;
    expect(failed.deliveries[0]).toMatchObject({ status: 500, ok: false });

    const g = e.grant;
    await fetch(`${server.eventsBaseUrl}/api/webhook/v1/users/${g.userId}/events/${e.id}`, {
      method: "POST",
      headers: { authorization: `Bearer ${g.token}`, "content-type": "application/json" },
      body: JSON.stringify({ type: ["EVENT_STATE"], method: "POST", url: "http://127.0.0.1:1/x" }),
    });
    const unreachable = (await (
      await post(`/events/${e.id}/state`, { state: "IN_EVENT" })
    ).json()) as StateResult;
    expect(unreachable.deliveries[0]).toMatchObject({ status: null, ok: false });
    expect(typeof unreachable.deliveries[0]?.error).toBe("string");
  });

  it("refuses bad requests: unknown event 404, bad state 400, JSON errors", async () => {
    const e = await scheduledEvent("state-bad@example.com", undefined);
    const unknown = await post("/events/nope/state", { state: "IN_EVENT" });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: string }).error).toMatch(/nope/);
    expect((await post(`/events/${e.id}/state`, { state: "LIVE" })).status).toBe(400);
    expect((await post(`/events/${e.id}/state`, { state: "IN_EVENT", extra: 1 })).status).toBe(400);
    const notJson = await fetch(`${control}/events/${e.id}/state`, { method: "POST", body: "{" });
    expect(notJson.status).toBe(400);
    expect((await fetch(`${control}/events/${e.id}/state`)).status).toBe(405);
    expect((await fetch(`${control}/nothing`)).status).toBe(404);
  });
});

describe("sandbox control: ATTENDEE_INFO", () => {
  it("JOIN carries joinTime and no leaveTime; LEFT carries both; activeAttendeeCount follows", async () => {
    const e = await scheduledEvent("attend@example.com", { method: "POST" });
    const res = await post(`/events/${e.id}/attendees`, {
      join: [{ name: "Ada", email: "ada@example.com", endpointType: "pstn" }, { name: "No Mail" }],
      count: 3,
      concurrency: 1,
    });
    expect(res.status).toBe(200);
    const joined = (await res.json()) as AttendeesResult;
    expect(joined.joined).toHaveLength(5);
    expect(joined).toMatchObject({ delivered: 5, failed: 0, activeAttendeeCount: 5 });
    expect((await e.get()).activeAttendeeCount).toBe(5);

    expect(receiver.received).toHaveLength(5);
    const first = receiver.received[0]!;
    expect(first.method).toBe("POST");
    expect(first.headers["x-onair-secret"]).toBe(SECRET_HEADER);
    expect(first.body).toEqual({
      eventId: e.id,
      instanceId: joined.instanceId,
      type: "ATTENDEE_INFO",
      info: {
        endpointGuid: joined.joined[0]!.endpointGuid,
        endpointType: "pstn",
        infoType: "JOIN",
        joinTime: clock,
        name: "Ada",
        email: "ada@example.com",
      },
    });
    const second = (receiver.received[1]!.body as { info: Record<string, unknown> }).info;
    expect(second.endpointType).toBe("browser");
    expect("email" in second).toBe(false);
    for (const r of receiver.received) {
      expect("leaveTime" in (r.body as { info: object }).info).toBe(false);
    }

    receiver.received.length = 0;
    const leave = [joined.joined[0]!.endpointGuid, joined.joined[3]!.endpointGuid];
    const left = (await (
      await post(`/events/${e.id}/attendees`, { leave })
    ).json()) as AttendeesResult;
    expect(left).toMatchObject({ delivered: 2, failed: 0, activeAttendeeCount: 3 });
    expect((await e.get()).activeAttendeeCount).toBe(3);
    const infos = receiver.received.map((r) => (r.body as { info: Record<string, unknown> }).info);
    expect(infos.map((i) => i.endpointGuid).sort()).toEqual([...leave].sort());
    for (const i of infos) {
      expect(i.infoType).toBe("LEFT");
      expect(i.joinTime).toBe(clock);
      expect(i.leaveTime).toBe(clock);
    }

    // Leaving again, or leaving someone never present, is refused and changes nothing.
    expect((await post(`/events/${e.id}/attendees`, { leave: [leave[0]] })).status).toBe(400);
    expect((await e.get()).activeAttendeeCount).toBe(3);
  });

  it("a present attendee who joins again is the same attendee: not joined twice, nothing delivered", async () => {
    const e = await scheduledEvent("rejoin@example.com", { method: "POST" });
    const first = (await (
      await post(`/events/${e.id}/attendees`, { join: [{ name: "Grace" }, { name: "Linus" }] })
    ).json()) as AttendeesResult;
    expect(first).toMatchObject({ delivered: 2, activeAttendeeCount: 2, alreadyPresent: [] });
    receiver.received.length = 0;
    const again = (await (
      await post(`/events/${e.id}/attendees`, {
        join: [{ name: "Grace" }, { name: "Grace" }, { name: "Grace", email: "g@example.com" }],
      })
    ).json()) as AttendeesResult;
    // Grace is here already; Grace with an e-mail is someone else, joined once.
    expect(again.alreadyPresent.map((a) => a.endpointGuid)).toEqual([
      first.joined[0]!.endpointGuid,
      first.joined[0]!.endpointGuid,
    ]);
    expect(again.joined.map((a) => a.email)).toEqual(["g@example.com"]);
    expect(again).toMatchObject({ delivered: 1, activeAttendeeCount: 3 });
    expect(receiver.received).toHaveLength(1);
    // After she leaves, Grace joining again is a new session.
    await post(`/events/${e.id}/attendees`, { leave: [first.joined[0]!.endpointGuid] });
    const back = (await (
      await post(`/events/${e.id}/attendees`, { join: [{ name: "Grace" }] })
    ).json()) as AttendeesResult;
    expect(back).toMatchObject({ alreadyPresent: [], activeAttendeeCount: 3 });
    expect(back.joined).toHaveLength(1);
  });

  it("with concurrency 1 an event's deliveries arrive in order, across calls too", async () => {
    const e = await scheduledEvent("order@example.com", { method: "POST" });
    const calls = [
      post(`/events/${e.id}/attendees`, { count: 30, concurrency: 1 }),
      post(`/events/${e.id}/state`, { state: "IN_EVENT" }),
      post(`/events/${e.id}/attendees`, { count: 10, concurrency: 1 }),
    ];
    await Promise.all(calls);
    const names = receiver.received.map((r) => {
      const b = r.body as { type: string; info: { name?: string; state?: string } };
      return b.type === "EVENT_STATE" ? b.info.state : b.info.name;
    });
    expect(names).toEqual([
      ...Array.from({ length: 30 }, (_, i) => `Attendee ${i + 1}`),
      "IN_EVENT",
      ...Array.from({ length: 10 }, (_, i) => `Attendee ${i + 31}`),
    ]);
  });

  it("a burst of 20,000 joins is delivered in full, at most 16 in flight", async () => {
    // A lean receiver of its own: this test is about the sandbox's side of 20,000 deliveries.
    const guids = new Set<string>();
    let inFlight = 0;
    let maxInFlight = 0;
    const lean = createServer((req, res) => {
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
          info: { endpointGuid: string; infoType: string };
        };
        if (body.info.infoType === "JOIN") guids.add(body.info.endpointGuid);
        // Answering on a later turn lets the sandbox's other deliveries show up meanwhile.
        setImmediate(() => {
          inFlight -= 1;
          res.writeHead(204).end();
        });
      });
    });
    await new Promise<void>((r) => lean.listen(0, "127.0.0.1", r));
    try {
      const g = await grant("burst@example.com");
      const headers = { authorization: `Bearer ${g.token}`, "content-type": "application/json" };
      const events = `${server.eventsBaseUrl}/api`;
      const created = await fetch(`${events}/scheduling/v1/users/${g.userId}/events`, {
        method: "POST",
        headers,
        body: JSON.stringify({ title: "Burst", start: clock + 1000, end: clock + 3_600_000 }),
      });
      const { id } = (await created.json()) as { id: string };
      const port = (lean.address() as AddressInfo).port;
      await fetch(`${events}/webhook/v1/users/${g.userId}/events/${id}`, {
        method: "POST",
        headers,
        body: JSON.stringify({
          type: ["ATTENDEE_INFO"],
          method: "POST",
          url: `http://127.0.0.1:${port}/hook`,
        }),
      });
      const result = (await (
        await post(`/events/${id}/attendees`, { count: 20_000 })
      ).json()) as AttendeesResult;
      expect(result).toMatchObject({ delivered: 20_000, failed: 0, activeAttendeeCount: 20_000 });
      expect(result.joined).toHaveLength(20_000);
      expect(guids.size).toBe(20_000);
      expect(maxInFlight).toBeLessThanOrEqual(16);
      expect(maxInFlight).toBeGreaterThan(1);
    } finally {
      lean.closeAllConnections();
      await new Promise<void>((r) => lean.close(() => r()));
    }
  }, 60_000);

  it("a new instanceId starts attendance from zero", async () => {
    const e = await scheduledEvent("instances@example.com", undefined);
    const first = (await (
      await post(`/events/${e.id}/attendees`, { count: 4 })
    ).json()) as AttendeesResult;
    expect(first).toMatchObject({ delivered: 0, failed: 0, activeAttendeeCount: 4 });
    const state = (await (
      await post(`/events/${e.id}/state`, { state: "PREP_EVENT", instanceId: "second-run" })
    ).json()) as StateResult;
    expect(state.instanceId).toBe("second-run");
    expect((await e.get()).activeAttendeeCount).toBe(0);
    const old = first.joined[0]!.endpointGuid;
    expect((await post(`/events/${e.id}/attendees`, { leave: [old] })).status).toBe(400);
  });

  it("GET lists who is present in the current instance, in the order they joined", async () => {
    const e = await scheduledEvent("present@example.com", undefined);
    const joins = (await (
      await post(`/events/${e.id}/attendees`, {
        join: [{ name: "Ann" }, { name: "Bob" }],
        count: 1,
      })
    ).json()) as AttendeesResult;
    await post(`/events/${e.id}/attendees`, { leave: [joins.joined[1]!.endpointGuid] });
    const res = await fetch(`${control}/events/${e.id}/attendees`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      instanceId: string;
      present: Array<{ endpointGuid: string; name: string }>;
    };
    expect(body.instanceId).toBe(joins.instanceId);
    expect(body.present.map((a) => a.name)).toEqual(["Ann", "Attendee 1"]);
    expect((await fetch(`${control}/events/nope/attendees`)).status).toBe(404);
    const put = await fetch(`${control}/events/${e.id}/attendees`, { method: "PUT" });
    expect(put.status).toBe(405);
  });

  it.each([
    ["join without name", { join: [{ email: "a@example.com" }] }],
    ["join not an array", { join: { name: "x" } }],
    ["negative count", { count: -1 }],
    ["count too large", { count: 1_000_001 }],
    ["zero concurrency", { count: 1, concurrency: 0 }],
    ["unknown field", { joins: [] }],
    ["duplicate leave", { leave: ["a", "a"] }],
  ])("refuses %s with 400", async (_name, body) => {
    const e = await scheduledEvent("attend-bad@example.com", undefined);
    const res = await post(`/events/${e.id}/attendees`, body);
    expect(res.status).toBe(400);
    expect(typeof ((await res.json()) as { error: string }).error).toBe("string");
  });
});

describe("sandbox control: faults", () => {
  it.each(RELAY_ERROR_NAMES)("relay %s: the catalog's status and full body", async (name) => {
    expect((await post("/faults", { service: "relay", error: name })).status).toBe(200);
    const res = await fetch(`${server.relayBaseUrl}/api/auth/accesstokens`, {
      method: "POST",
      headers: { authorization: BASIC },
    });
    const entry = RELAY_ERROR_CATALOG[name];
    expect(res.status).toBe(entry.status);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body.errorName).toBe(name);
    expect(body.errorCode).toBe(entry.errorCode);
    expect(typeof body.errorMessage).toBe("string");
    if (entry.detailsKeys === null) expect(body.errorDetails).toBeNull();
    else {
      const details = body.errorDetails as Record<string, unknown>;
      expect(Object.keys(details).sort()).toEqual([...entry.detailsKeys].sort());
      for (const k of entry.detailsKeys) expect(details[k]).not.toBeUndefined();
    }
    // One call only: the next one succeeds.
    const next = await fetch(`${server.relayBaseUrl}/api/auth/accesstokens`, {
      method: "POST",
      headers: { authorization: BASIC },
    });
    expect(next.status).toBe(200);
  });

  it("relay status alone: the first catalog error with that status, else a generic body", async () => {
    await post("/faults", { service: "relay", status: 503 });
    const res = await fetch(`${server.relayBaseUrl}/api/enterprises/self`);
    expect(res.status).toBe(503);
    expect(((await res.json()) as { errorName: string }).errorName).toBe("ListenerOffline");

    await post("/faults", { service: "relay", status: 429 });
    const generic = await fetch(`${server.relayBaseUrl}/api/enterprises/self`);
    expect(generic.status).toBe(429);
    expect(await generic.json()).toEqual({
      errorCode: 429,
      errorName: "HttpError",
      errorMessage: "HTTP 429",
      errorDetails: null,
    });
  });

  it("events: a status alone with no body, for `times` calls; control calls are not affected", async () => {
    await post("/faults", { service: "events", status: 503, times: 2 });
    const call = () =>
      fetch(`${server.eventsBaseUrl}/api/security/v1/oauth/accesstoken`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          grant_type: "enterprise_app",
          properties: { client_id: "sandbox-key", client_secret: "sandbox-secret" },
        }),
      });
    expect((await fetch(`${control}/faults`)).status).toBe(200);
    for (let i = 0; i < 2; i += 1) {
      const res = await call();
      expect(res.status).toBe(503);
      expect(await res.text()).toBe("");
    }
    expect((await call()).status).toBe(200);
  });

  it("a delay-only fault lets the call through; relay faults do not touch events", async () => {
    const faults = (await (await post("/faults", { service: "relay", delayMs: 20 })).json()) as {
      faults: Array<{ service: string; delayMs: number; remaining: number }>;
    };
    expect(faults.faults).toEqual([
      expect.objectContaining({ service: "relay", delayMs: 20, remaining: 1 }),
    ]);
    const evt = await fetch(`${server.eventsBaseUrl}/nothing`);
    expect(evt.status).toBe(401);
    const res = await fetch(`${server.relayBaseUrl}/api/auth/accesstokens`, {
      method: "POST",
      headers: { authorization: BASIC },
    });
    expect(res.status).toBe(200);
    expect(
      ((await (await fetch(`${control}/faults`)).json()) as { faults: unknown[] }).faults,
    ).toEqual([]);
  });

  it.each([
    ["unknown error name", { service: "relay", error: "NoSuchError" }],
    ["an error name for events", { service: "events", error: "NotFound" }],
    ["unknown service", { service: "slack", status: 500 }],
    ["status out of range", { service: "events", status: 200 }],
    ["nothing to do", { service: "relay" }],
    ["times zero", { service: "relay", status: 500, times: 0 }],
  ])("refuses %s with 400", async (_name, body) => {
    const res = await post("/faults", body);
    expect(res.status).toBe(400);
    expect(typeof ((await res.json()) as { error: string }).error).toBe("string");
  });

  it("DELETE clears pending faults", async () => {
    await post("/faults", { service: "relay", status: 500, times: 5 });
    expect((await fetch(`${control}/faults`, { method: "DELETE" })).status).toBe(200);
    const res = await fetch(`${server.relayBaseUrl}/api/auth/accesstokens`, {
      method: "POST",
      headers: { authorization: BASIC },
    });
    expect(res.status).toBe(200);
  });
});

describe("sandbox control: call log", () => {
  it("records each call with status and body, and never a credential", async () => {
    await fetch(`${control}/log`, { method: "DELETE" });
    logLines.length = 0;
    const secrets: string[] = [
      BASIC.slice("Basic ".length),
      "sandbox-secret",
      SECRET_HEADER,
      "777123",
    ];

    const e = await scheduledEvent("log@example.com", { method: "POST" });
    secrets.push(e.grant.token);
    const relayToken = (await (
      await fetch(`${server.relayBaseUrl}/api/auth/accesstokens?clientname=log`, {
        method: "POST",
        headers: { authorization: BASIC },
      })
    ).json()) as { accessToken: string };
    secrets.push(relayToken.accessToken);
    await fetch(
      `${server.relayBaseUrl}/api/enterprises/self?accesstoken=${relayToken.accessToken}`,
    );
    await fetch(`${server.relayBaseUrl}/api/enterprises/self`, {
      headers: { "x-access-token": relayToken.accessToken },
    });
    const pairing = (await (
      await fetch(
        `${server.relayBaseUrl}/api/auth/accesstokens?meetingaccesstoken=${e.grant.token}&code=777123`,
        { method: "POST" },
      )
    ).json()) as { accessToken: string };
    secrets.push(pairing.accessToken);
    await fetch(
      `${server.eventsBaseUrl}/api/scheduling/v1/users/${e.grant.userId}/events/${e.id}`,
      {
        method: "PUT",
        headers: { authorization: `Bearer ${e.grant.token}`, "content-type": "application/json" },
        body: JSON.stringify({ description: "edited" }),
      },
    );

    const { entries } = (await (await fetch(`${control}/log`)).json()) as {
      entries: Array<Record<string, unknown>>;
    };
    const text = JSON.stringify(entries);
    const logged = logLines.join("");
    for (const s of secrets) {
      expect(text).not.toContain(s);
      expect(logged).not.toContain(s);
    }
    expect(entries.map((x) => x.seq)).toEqual(
      [...entries.keys()].map((i) => (entries[0]!.seq as number) + i),
    );
    const tokenCall = entries.find((x) => x.grantType === "user_app");
    expect(tokenCall).toMatchObject({
      service: "events",
      method: "POST",
      path: "/api/security/v1/oauth/accesstoken",
      status: 200,
      at: clock,
      body: { grant_type: "user_app", properties: { client_secret: "[redacted]" } },
    });
    const hook = entries.find((x) => (x.path as string).startsWith("/api/webhook/"));
    expect(hook?.body).toMatchObject({ headers: { "X-Onair-Secret": "[redacted]" } });
    const edit = entries.find((x) => x.method === "PUT");
    expect(edit).toMatchObject({ status: 204, body: { description: "edited" } });
    const pairingCall = entries.find(
      (x) => (x.query as Record<string, string> | undefined)?.code !== undefined,
    );
    expect(pairingCall?.query).toEqual({ meetingaccesstoken: "[redacted]", code: "[redacted]" });
    expect(logged).toContain("sandbox call");

    expect((await fetch(`${control}/log`, { method: "DELETE" })).status).toBe(200);
    expect(
      ((await (await fetch(`${control}/log`)).json()) as { entries: unknown[] }).entries,
    ).toEqual([]);
  });

  it("a refused events call is logged with its reason", async () => {
    await fetch(`${control}/log`, { method: "DELETE" });
    await fetch(`${server.eventsBaseUrl}/api/scheduling/v1/users/1/events`, { method: "POST" });
    const { entries } = (await (await fetch(`${control}/log`)).json()) as {
      entries: Array<{ status: number; reason?: string }>;
    };
    expect(entries).toEqual([expect.objectContaining({ status: 401, reason: expect.any(String) })]);
  });
});

describe("sandbox: mounting and the in-process control", () => {
  it("handle() takes /_sandbox/ paths only, so an app can mount it", async () => {
    const sandbox = createSandbox({ now: () => clock });
    const app = createServer((req, res) => {
      if (sandbox.handle(req, res)) return;
      res.writeHead(418).end("app");
    });
    await new Promise<void>((r) => app.listen(0, "127.0.0.1", r));
    const origin = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
    try {
      const mine = await fetch(`${origin}/healthz`);
      expect(mine.status).toBe(418);
      expect(await mine.text()).toBe("app");
      expect((await fetch(`${origin}/_sandbox/relay/api/enterprises/self`)).status).toBe(401);
      expect((await fetch(`${origin}/_sandbox/other`)).status).toBe(404);
      expect((await fetch(`${origin}/_sandbox/control/log`)).status).toBe(200);
    } finally {
      app.closeAllConnections();
      await new Promise<void>((r) => app.close(() => r()));
      await sandbox.close();
    }
  });

  it("the in-process control throws SandboxControlError for bad input and unknown events", async () => {
    const c = server.sandbox.control;
    await expect(c.setState("missing", { state: "IN_EVENT" })).rejects.toMatchObject({
      status: 404,
    });
    await expect(c.setState("missing", { state: "LIVE" as "IN_EVENT" })).rejects.toBeInstanceOf(
      SandboxControlError,
    );
    expect(() => c.addFault({ service: "relay", error: "Nope" as "NotFound" })).toThrow(
      SandboxControlError,
    );
    const e = await scheduledEvent("inproc@example.com", { method: "POST" });
    const result = await c.attendees(e.id, { count: 2 });
    expect(result).toMatchObject({ delivered: 2, activeAttendeeCount: 2 });
    expect(c.log().length).toBeGreaterThan(0);
  });
});
