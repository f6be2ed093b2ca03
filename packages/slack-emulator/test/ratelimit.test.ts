import { WebClient } from "@slack/web-api";
import { afterEach, describe, expect, it } from "vitest";
import { type RateLimits, type SlackEmulator, startSlackEmulator } from "../src/index.ts";
import { ALL_TEST_SCOPES, quietLogger } from "./helpers.ts";

// Slack's rate limits on the emulator's clock: per-method tiers as token buckets holding the
// per-minute allowance, the per-channel message rate, the non-Marketplace history limits.

const EVENTS = "C0EVENTS";
const GENERAL = "C0GENERAL";
let clock = Date.UTC(2025, 0, 15, 12, 0, 0);
let emu: SlackEmulator | undefined;

async function start(rateLimits?: RateLimits | false): Promise<SlackEmulator> {
  emu = await startSlackEmulator({
    signingSecret: "ratelimit",
    now: () => clock,
    seed: { botScopes: ALL_TEST_SCOPES },
    ...(rateLimits !== undefined && { rateLimits }),
  });
  return emu;
}

afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

/** A raw call: the status and Retry-After, no client retrying behind the test's back. */
async function call(e: SlackEmulator, method: string, args: Record<string, string>) {
  const res = await fetch(`${e.apiUrl}${method}`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      authorization: `Bearer ${e.botToken}`,
    },
    body: new URLSearchParams(args).toString(),
  });
  const body = (await res.json()) as Record<string, unknown>;
  return { status: res.status, retryAfter: res.headers.get("retry-after"), body };
}

describe("tiers", () => {
  it("lets a tier 2 method burst to 20 a minute, then answers 429 with Retry-After", async () => {
    const e = await start();
    const args = { usergroup: "S0ORGANIZERS" };
    for (let i = 0; i < 20; i++) {
      expect((await call(e, "usergroups.users.list", args)).status, `call ${i + 1}`).toBe(200);
    }
    const refused = await call(e, "usergroups.users.list", args);
    expect(refused).toEqual({
      status: 429,
      retryAfter: "3",
      body: { ok: false, error: "ratelimited" },
    });
    // Another method has its own bucket.
    expect((await call(e, "usergroups.list", {})).status).toBe(200);
    // Three seconds refill one call (20 a minute).
    clock += 3_000;
    expect((await call(e, "usergroups.users.list", args)).status).toBe(200);
    expect((await call(e, "usergroups.users.list", args)).status).toBe(429);
  });

  it("gives tier 3 fifty and tier 4 a hundred", async () => {
    const e = await start({ perChannel: false });
    for (let i = 0; i < 50; i++)
      expect((await call(e, "users.info", { user: "U0OMAR0ORG" })).status).toBe(200);
    expect((await call(e, "users.info", { user: "U0OMAR0ORG" })).status).toBe(200);
    for (let i = 0; i < 50; i++) {
      expect((await call(e, "users.lookupByEmail", { email: "omar@example.com" })).status).toBe(
        200,
      );
    }
    const t3 = await call(e, "users.lookupByEmail", { email: "omar@example.com" });
    expect([t3.status, t3.retryAfter]).toEqual([429, "2"]);
  });

  it("keeps a tier's bucket per workspace when one emulator stands in for several", async () => {
    const e = await start({
      perChannel: false,
      workspaceOf: (ch) => (ch === EVENTS ? "T0ONE" : ch === GENERAL ? "T0TWO" : undefined),
    });
    const update = async (channel: string) => {
      const posted = await call(e, "chat.postMessage", { channel, text: "x" });
      return call(e, "chat.update", { channel, ts: String(posted.body.ts), text: "y" });
    };
    // chat.update is tier 3: fifty a minute in #events' workspace…
    for (let i = 0; i < 50; i++) expect((await update(EVENTS)).status, `update ${i + 1}`).toBe(200);
    expect((await update(EVENTS)).status).toBe(429);
    // …and another fifty in #general's, which has its own bucket.
    for (let i = 0; i < 50; i++) expect((await update(GENERAL)).status).toBe(200);
    expect((await update(GENERAL)).status).toBe(429);
  });

  it("is off when a test says so", async () => {
    const e = await start(false);
    for (let i = 0; i < 25; i++) {
      expect((await call(e, "usergroups.users.list", { usergroup: "S0ORGANIZERS" })).status).toBe(
        200,
      );
    }
    for (let i = 0; i < 10; i++)
      expect((await call(e, "chat.postMessage", { channel: EVENTS, text: "x" })).status).toBe(200);
  });
});

describe("the per-channel message rate", () => {
  it("paces chat.postMessage per channel: a short burst, then about one a second", async () => {
    const e = await start();
    for (let i = 0; i < 3; i++) {
      expect((await call(e, "chat.postMessage", { channel: EVENTS, text: `${i}` })).status).toBe(
        200,
      );
    }
    const refused = await call(e, "chat.postMessage", { channel: EVENTS, text: "3" });
    expect([refused.status, refused.retryAfter]).toEqual([429, "1"]);
    // Another channel is not held back; nor is chat.update (tier 3, not the message rate).
    expect((await call(e, "chat.postMessage", { channel: GENERAL, text: "g" })).status).toBe(200);
    clock += 1_000;
    expect((await call(e, "chat.postMessage", { channel: EVENTS, text: "4" })).status).toBe(200);
    expect((await call(e, "chat.postMessage", { channel: EVENTS, text: "5" })).status).toBe(429);
  });

  it("keeps setRateLimit for callers that pace other methods, and turns the rate off", async () => {
    const e = await start();
    e.setRateLimit({ perChannelPerSec: 1, burst: 1, methods: ["chat.postMessage", "chat.update"] });
    const posted = await call(e, "chat.postMessage", { channel: EVENTS, text: "card" });
    const ts = String(posted.body.ts);
    expect((await call(e, "chat.update", { channel: EVENTS, ts, text: "card 2" })).status).toBe(
      429,
    );
    e.setRateLimit(undefined);
    expect((await call(e, "chat.update", { channel: EVENTS, ts, text: "card 2" })).status).toBe(
      200,
    );
    for (let i = 0; i < 5; i++)
      expect((await call(e, "chat.postMessage", { channel: EVENTS, text: "x" })).status).toBe(200);
  });

  it("is retried by WebClient after Retry-After", async () => {
    const e = await start();
    const client = new WebClient(e.botToken, { slackApiUrl: e.apiUrl, logger: quietLogger });
    for (let i = 0; i < 3; i++) await client.chat.postMessage({ channel: EVENTS, text: `${i}` });
    // The clock moves on as WebClient waits out the Retry-After it was given.
    const timer = setTimeout(() => {
      clock += 1_000;
    }, 500);
    const r = await client.chat.postMessage({ channel: EVENTS, text: "after the wait" });
    clearTimeout(timer);
    expect(r.ok).toBe(true);
    const statuses = e.calls.filter((c) => c.method === "chat.postMessage").map((c) => c.status);
    expect(statuses).toEqual([200, 200, 200, 429, 200]);
  });
});

describe("non-Marketplace apps", () => {
  it("get conversations.history and replies at 1 a minute and 15 messages a page", async () => {
    const e = await start({ nonMarketplace: true, perChannel: false });
    const ch = e.workspace.channels.get(EVENTS)!;
    const parent = e.workspace.postMessage(ch, "U0OMAR0ORG", { text: "parent" });
    for (let i = 0; i < 20; i++) {
      e.workspace.postMessage(ch, "U0OMAR0ORG", { text: `m${i}`, thread_ts: parent.ts });
      e.workspace.postMessage(ch, "U0OMAR0ORG", { text: `top ${i}` });
    }
    const first = await call(e, "conversations.history", { channel: EVENTS, limit: "100" });
    expect(first.status).toBe(200);
    expect((first.body.messages as unknown[]).length).toBe(15);
    expect(first.body.has_more).toBe(true);
    const second = await call(e, "conversations.history", { channel: EVENTS });
    expect([second.status, second.retryAfter]).toEqual([429, "60"]);
    const replies = await call(e, "conversations.replies", { channel: EVENTS, ts: parent.ts });
    expect((replies.body.messages as unknown[]).length).toBe(15);
    clock += 60_000;
    expect((await call(e, "conversations.history", { channel: EVENTS })).status).toBe(200);
    expect(e.rateLimits.nonMarketplace).toBe(true);
    e.setRateLimits({ nonMarketplace: false });
    const page = await call(e, "conversations.history", { channel: EVENTS, limit: "100" });
    expect((page.body.messages as unknown[]).length).toBe(21);
  });
});

describe("throttle rules", () => {
  it("still answer the next matching calls with 429 or a named refusal", async () => {
    const e = await start(false);
    e.throttle({ method: "views.open", times: 1, retryAfterSec: 7 });
    const r = await call(e, "views.open", { trigger_id: "1.2.3", view: "{}" });
    expect([r.status, r.retryAfter]).toEqual([429, "7"]);
    e.throttle({
      method: "conversations.join",
      times: 1,
      retryAfterSec: 0,
      error: "channel_is_limited_access",
    });
    expect((await call(e, "conversations.join", { channel: "C0TOWNHALL" })).body.error).toBe(
      "channel_is_limited_access",
    );
  });

  it("refuse to stage a refusal Slack's reference does not list for the method", async () => {
    const e = await start(false);
    // restricted_action is chat.postMessage's, not conversations.join's.
    expect(() =>
      e.throttle({
        method: "conversations.join",
        times: 1,
        retryAfterSec: 0,
        error: "restricted_action",
      }),
    ).toThrow(/does not list restricted_action for conversations.join/);
    // Without a method the rule may hit any call: only an error every method may answer.
    expect(() =>
      e.throttle({ times: 1, retryAfterSec: 0, error: "message_limit_exceeded" }),
    ).toThrow(/every method/);
    e.throttle({ times: 1, retryAfterSec: 0, error: "internal_error" });
    expect((await call(e, "auth.test", {})).body.error).toBe("internal_error");
    e.throttle({
      method: "chat.postMessage",
      times: 1,
      retryAfterSec: 0,
      error: "restricted_action",
    });
    const posted = await call(e, "chat.postMessage", { channel: "C0TOWNHALL", text: "hi" });
    expect(posted.body.error).toBe("restricted_action");
  });
});
