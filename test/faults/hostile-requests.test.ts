import { randomBytes } from "node:crypto";
import { signSlackRequest, startSlackEmulator } from "@onair/slack-emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashWebhookSecret } from "../../src/store/index.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { runMain, tempDir } from "../helpers/main-process.ts";

/**
 * Hostile requests through the real routes: a webhook sender testing the schema's edges, signed
 * Slack requests Bolt would choke on, redeliveries, and the process that must stay up.
 */

interface Answer {
  status: number;
  text: string;
}

/** A request Slack could have signed (the test holds the signing secret). */
async function signed(
  origin: string,
  secret: string,
  body: string,
  contentType: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const ts = Math.floor(Date.now() / 1000);
  const res = await fetch(`${origin}/slack/events`, {
    method: "POST",
    headers: {
      "content-type": contentType,
      "x-slack-request-timestamp": String(ts),
      "x-slack-signature": signSlackRequest(secret, ts, body),
      ...headers,
    },
    body,
  });
  return { status: res.status, text: await res.text() };
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

describe("a hostile webhook sender", () => {
  let h: Harness;
  const SUB = randomBytes(18).toString("base64url");
  const SECRET = randomBytes(32).toString("base64url");
  const EVENT = "evt-hostile-fields";

  beforeAll(async () => {
    h = await startHarness();
    await h.app.store.subscriptions.put(SUB, {
      team: TEAM,
      eventId: EVENT,
      channels: [CHANNELS.general],
      secretSha256: hashWebhookSecret(SECRET),
      types: ["EVENT_STATE", "ATTENDEE_INFO"],
      noise: "off",
      createdAt: Date.now(),
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  async function deliver(info: Record<string, unknown>): Promise<Answer> {
    const res = await fetch(`${h.app.origin}/webhooks/events/${SUB}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-onair-secret": SECRET },
      body: JSON.stringify({ eventId: EVENT, instanceId: "i-1", type: "ATTENDEE_INFO", info }),
    });
    return { status: res.status, text: await res.text() };
  }

  const join = (over: Record<string, unknown>) => ({
    endpointGuid: "guid-1",
    endpointType: "browser",
    infoType: "JOIN",
    joinTime: Date.now(),
    name: "Somebody",
    ...over,
  });

  it("a JOIN with an empty endpointGuid is refused with 400, so it is never acknowledged", async () => {
    const before = (await h.app.store.outbox.list(10_000)).length;
    const a = await deliver(join({ endpointGuid: "" }));
    expect(a.status).toBe(400);
    expect(a.text).toMatch(/endpointGuid/);
    expect((await h.app.store.outbox.list(10_000)).length).toBe(before);
  });

  it("fields longer than their caps are refused with 400 (a 40 KB endpointGuid, name, e-mail)", async () => {
    for (const over of [
      { endpointGuid: "g".repeat(40_000) },
      { name: "n".repeat(5_000) },
      { email: `${"e".repeat(300)}@example.com` },
      { endpointType: "t".repeat(1_000) },
    ]) {
      const a = await deliver(join(over));
      expect(a.status, Object.keys(over)[0]).toBe(400);
    }
    const ok = await deliver(join({ endpointGuid: "a".repeat(128), name: "n".repeat(256) }));
    expect(ok.status).toBe(204);
  });
});

describe("hostile signed Slack requests", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  it("a signed view_submission without a view or a state is refused with 400; no listener runs", async () => {
    const since = h.emulator.calls.length;
    const user = { id: USERS.omar, team_id: TEAM };
    for (const payload of [
      { type: "view_submission", user, team: { id: TEAM } },
      {
        type: "view_submission",
        user,
        team: { id: TEAM },
        view: { id: "V1", callback_id: "onair_event_form" },
      },
    ]) {
      const a = await signed(
        h.app.origin,
        h.emulator.signingSecret,
        form({ payload: JSON.stringify(payload) }),
        "application/x-www-form-urlencoded",
      );
      expect(a.status).toBe(400);
    }
    await new Promise((r) => setTimeout(r, 200));
    expect(h.emulator.calls.slice(since)).toEqual([]);
    expect(h.logs.filter((l) => /"level":(50|60)/.test(l))).toEqual([]);
  });

  it("an Events API redelivery (same event_id, x-slack-retry-num) is acted on once", async () => {
    const body = JSON.stringify({
      token: "unused",
      team_id: TEAM,
      api_app_id: "A0ONAIR",
      type: "event_callback",
      event_id: "Ev0REDELIVERED1",
      event_time: Math.floor(Date.now() / 1000),
      event: { type: "app_home_opened", user: USERS.omar, channel: "D0OMAR", tab: "home" },
      authorizations: [{ team_id: TEAM, user_id: "U0ONAIRBOT", is_bot: true }],
    });
    const since = h.emulator.calls.length;
    const first = await signed(h.app.origin, h.emulator.signingSecret, body, "application/json");
    expect(first.status).toBe(200);
    await h.emulator.waitForCall((c) => c.method === "views.publish", { since });
    const again = await signed(h.app.origin, h.emulator.signingSecret, body, "application/json", {
      "x-slack-retry-num": "1",
      "x-slack-retry-reason": "http_timeout",
    });
    expect(again.status).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    expect(h.emulator.calls.slice(since).filter((c) => c.method === "views.publish").length).toBe(
      1,
    );
  });

  it("Slack's unsigned ssl_check gets 200, and nothing else gets in with it", async () => {
    const since = h.emulator.calls.length;
    const res = await fetch(`${h.app.origin}/slack/events`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: form({ ssl_check: "1", token: "whatever" }),
    });
    expect(res.status).toBe(200);
    const smuggled = await fetch(`${h.app.origin}/slack/events`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: form({ command: "/onair", text: "help", user_id: USERS.omar }),
    });
    expect(smuggled.status).toBe(401);
    expect(h.emulator.calls.slice(since)).toEqual([]);
  });
});

describe("the process (npm start) under hostile signed requests", () => {
  it("survives null and non-object bodies (400 each), and keeps serving", async () => {
    const secret = "a-signing-secret-for-tests";
    const emulator = await startSlackEmulator({ signingSecret: secret });
    try {
      const p = runMain(
        {
          PORT: "0",
          LOG_LEVEL: "warn",
          SLACK_BOT_TOKEN: emulator.botToken,
          SLACK_SIGNING_SECRET: secret,
          SLACK_API_URL: emulator.apiUrl,
          ONAIR_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
          ONAIR_SANDBOX: "1",
          STORE_URL: "memory://",
        },
        tempDir(),
      );
      const m = await p.waitFor(/serving Slack on port (\d+)/);
      const origin = `http://127.0.0.1:${m[1]}`;
      emulator.setAppUrl(origin);
      for (const [body, type] of [
        ["null", "application/json"],
        ["42", "application/json"],
        ['"text"', "application/json"],
        ["[]", "application/json"],
        ["payload=null", "application/x-www-form-urlencoded"],
        ["payload=%5B%5D", "application/x-www-form-urlencoded"],
        ["payload=%7B%7D", "application/x-www-form-urlencoded"],
      ] as const) {
        const a = await signed(origin, secret, body, type);
        expect(a.status, body).toBe(400);
      }
      expect((await fetch(`${origin}/healthz`)).status).toBe(200);
      const help = await emulator.driver.slashCommand({
        user: USERS.omar,
        channel: CHANNELS.general,
        text: "help",
      });
      expect(help.status).toBe(200);
      await emulator.waitForCall((c) => c.method === "response_url");
      expect(p.child.exitCode).toBeNull();
      expect(p.err()).not.toMatch(/TypeError|unhandled/i);
      p.child.kill("SIGTERM");
      expect(await p.exited).toBe(0);
    } finally {
      await emulator.close();
    }
  });
});

describe("the embedded sandbox and its open control API", () => {
  const secret = "a-signing-secret-for-tests";
  let emulator: Awaited<ReturnType<typeof startSlackEmulator>>;
  let slack: Record<string, string>;
  beforeAll(async () => {
    emulator = await startSlackEmulator({ signingSecret: secret });
    slack = {
      PORT: "0",
      LOG_LEVEL: "warn",
      SLACK_BOT_TOKEN: emulator.botToken,
      SLACK_API_URL: emulator.apiUrl,
      SLACK_SIGNING_SECRET: secret,
      ONAIR_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      STORE_URL: "memory://",
    };
  });
  afterAll(async () => {
    await emulator?.close();
  });

  it("with real Slack credentials and no upstream URLs, the app refuses to start (one line)", async () => {
    const p = runMain(slack, tempDir());
    expect(await p.exited).toBe(1);
    const lines = p.err().trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/RELAY_BASE_URL and EVENTS_BASE_URL.*ONAIR_SANDBOX=1/);
  });

  it("with upstream URLs and no ONAIR_SANDBOX, /_sandbox/ is not served", async () => {
    const p = runMain(
      {
        ...slack,
        RELAY_BASE_URL: "http://127.0.0.1:9/relay",
        EVENTS_BASE_URL: "http://127.0.0.1:9/events",
      },
      tempDir(),
    );
    const m = await p.waitFor(/serving Slack on port (\d+)/);
    const origin = `http://127.0.0.1:${m[1]}`;
    const control = await fetch(`${origin}/_sandbox/control/log`);
    expect(control.status).toBe(404);
    p.child.kill("SIGTERM");
    await p.exited;
  });

  it("with ONAIR_SANDBOX=1 it serves the sandbox and warns that its control API is open", async () => {
    const p = runMain({ ...slack, ONAIR_SANDBOX: "1" }, tempDir());
    const m = await p.waitFor(/serving Slack on port (\d+)/);
    const origin = `http://127.0.0.1:${m[1]}`;
    expect((await fetch(`${origin}/_sandbox/control/log`)).status).toBe(200);
    expect(p.out()).toMatch(/ONAIR_SANDBOX=1.*control API/);
    p.child.kill("SIGTERM");
    await p.exited;
  });
});
