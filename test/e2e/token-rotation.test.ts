import { randomBytes } from "node:crypto";
import type { CallRecord } from "@onair/slack-emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROTATION_REFUSED_TEXT } from "../../src/slack/home.ts";
import { USERS } from "../helpers/app-harness.ts";
import { eventually, freePort } from "../helpers/live-fixtures.ts";
import {
  type Balancer,
  expectExactCounts,
  type LiveStage,
  startBalancer,
  startLiveStage,
} from "../helpers/live-stage.ts";
import { emptyRedisDatabase } from "../helpers/servers.ts";

/**
 * Token rotation with two instances on one Redis behind a balancer: the emulator's bot tokens
 * expire every LIFETIME_S seconds (Slack's are 12 hours), a live event goes on through several
 * expiries with no Slack request coming in, every post lands, and each expiry costs exactly one
 * refresh (the emulator spends a refresh token on use, so two instances refreshing at once
 * would show as a refused refresh: node-slack-sdk#2504). Then Slack refuses a refresh: the
 * admins are told once (DM and App Home), and the app stops posting there instead of retrying.
 */

const REDIS = process.env.TEST_REDIS_URL;
const required = process.env.ONAIR_REQUIRE_SERVICES === "1";
// A database of its own: the app's keys carry no namespace, so they must not meet other files'.
const DB = 7;
const LIFETIME_S = 6;

let stage: LiveStage;
let balancer: Balancer;

const refreshes = (since = 0): CallRecord[] =>
  stage.emulator.calls.filter(
    (c) => c.seq > since && c.method === "oauth.v2.access" && c.args.grant_type === "refresh_token",
  );

describe.skipIf(!REDIS && !required)("token rotation, two instances on one Redis", () => {
  beforeAll(async () => {
    const storeUrl = await emptyRedisDatabase(DB);
    stage = await startLiveStage({ title: "Rotating all hands", storeUrl });
    stage.emulator.setTokenRotation({ expiresInSec: LIFETIME_S });
    const [portA, portB] = [await freePort(), await freePort()];
    balancer = await startBalancer([portA, portB], { failover: false });
    const stateSecret = randomBytes(16).toString("hex");
    const env = (port: number) => {
      const { SLACK_BOT_TOKEN: _none, ...rest } = stage.childEnv({
        port,
        publicUrl: balancer.url,
        logLevel: "info",
      });
      return {
        ...rest,
        SLACK_CLIENT_ID: stage.emulator.clientId,
        SLACK_CLIENT_SECRET: stage.emulator.clientSecret,
        SLACK_STATE_SECRET: stateSecret,
      };
    };
    await Promise.all([stage.spawn(env(portA)), stage.spawn(env(portB))]);
    stage.emulator.setAppUrl(balancer.url);
    const installed = await stage.emulator.driver.oauthInstall();
    expect(installed.callback.status).toBe(200);
  }, 60_000);

  afterAll(async () => {
    await balancer?.close();
    await stage?.close();
  });

  it("posts through several expiries, refreshing once per expiry", async () => {
    const { emulator, event } = stage;
    const ts = await stage.notify(balancer.url);
    const started = emulator.workspace.now();
    const control = stage.sandbox.sandbox.control;
    for (const state of ["NOT_STARTED", "PREP_EVENT", "IN_EVENT"] as const) {
      const r = await control.setState(event.eventId, { state });
      expect(r.deliveries.map((d) => d.status)).toEqual([204]);
    }
    // Joins keep coming for three token lifetimes; no Slack request comes in meanwhile.
    let joined = 0;
    while (emulator.workspace.now() - started < 3 * LIFETIME_S * 1000) {
      const r = await control.attendees(event.eventId, { count: 3, concurrency: 3 });
      joined += r.delivered;
      await new Promise((res) => setTimeout(res, 700));
    }
    await expectExactCounts(
      stage,
      ts,
      { joined, left: 0, now: joined, peak: joined, unique: joined },
      "through the expiries",
    );

    // Every call the app made with a token was accepted: no expired or refused token.
    const refused = emulator.calls.filter((c) =>
      ["token_expired", "invalid_auth", "token_revoked", "invalid_refresh_token"].includes(
        c.error ?? "",
      ),
    );
    expect(refused.map((c) => `${c.method}: ${c.error}`)).toEqual([]);
    const done = refreshes();
    const elapsedS = (emulator.workspace.now() - started) / 1000;
    // Several expiries, and one refresh each: a token lives LIFETIME_S and is refreshed in its
    // last quarter, so two refreshes of one token would come less than half a life apart.
    expect(done.length).toBeGreaterThanOrEqual(3);
    expect(done.length).toBeLessThanOrEqual(Math.ceil(elapsedS / (LIFETIME_S / 2)) + 1);
    for (let i = 1; i < done.length; i++) {
      const gap = (done[i]?.time ?? 0) - (done[i - 1]?.time ?? 0);
      expect(gap, `refresh ${i} came ${gap} ms after the one before`).toBeGreaterThan(
        (LIFETIME_S * 1000) / 2,
      );
    }
    expect(done.every((c) => c.ok)).toBe(true);
    // With nothing to post and no request, the schedule still refreshes before each expiry.
    const quiet = emulator.calls.at(-1)?.seq ?? 0;
    await new Promise((res) => setTimeout(res, 2.5 * LIFETIME_S * 1000));
    expect(refreshes(quiet).length).toBeGreaterThanOrEqual(2);
    expect(refreshes(quiet).every((c) => c.ok)).toBe(true);
    const logs = stage.children.map((c) => c.output.join(""));
    // No token or refresh token ever reached a log line.
    for (const l of logs) {
      expect(l).not.toMatch(/xoxe\.xoxb-|xoxe-1-/);
    }
  }, 90_000);

  it("a refresh Slack refuses reaches the admins once, and posting stops there", async () => {
    const { emulator, event } = stage;
    const since = emulator.calls.at(-1)?.seq ?? 0;
    emulator.workspace.refusedRefresh = true;
    await new Promise((r) => setTimeout(r, 9000));
    console.log(
      JSON.stringify(refreshes(since)),
      stage.children
        .map((c) => c.output.join("").split("\n").slice(-15).join("\n"))
        .join("\n=====\n"),
    );
    await eventually(
      () => (refreshes(since).some((c) => c.error === "invalid_refresh_token") ? true : undefined),
      "a refused refresh",
      3 * LIFETIME_S * 1000,
    );
    // Told once: a DM and App Home, to the admin (Ada), while the old token still works.
    const dm = await emulator.waitForCall(
      (c) =>
        c.seq > since &&
        c.method === "chat.postMessage" &&
        c.args.channel === USERS.admin &&
        String(c.args.text).includes("refused to renew"),
      { timeoutMs: 5_000 },
    );
    expect(dm.ok).toBe(true);
    await emulator.waitForCall(
      (c) =>
        c.seq > since &&
        c.method === "views.publish" &&
        c.args.user_id === USERS.admin &&
        JSON.stringify(c.args.view).includes("refused to renew"),
      { timeoutMs: 5_000 },
    );
    expect(ROTATION_REFUSED_TEXT).toContain("installing On Air again");

    // Joins keep coming over two more lifetimes: nothing is posted, nothing refreshed again.
    const quiet = emulator.calls.at(-1)?.seq ?? 0;
    const until = emulator.workspace.now() + 2 * LIFETIME_S * 1000;
    while (emulator.workspace.now() < until) {
      await stage.sandbox.sandbox.control.attendees(event.eventId, { count: 2, concurrency: 2 });
      await new Promise((res) => setTimeout(res, 800));
    }
    const after = emulator.calls.filter((c) => c.seq > quiet);
    expect(after.filter((c) => c.method.startsWith("chat.")).map((c) => c.method)).toEqual([]);
    expect(refreshes(since)).toHaveLength(1);
    const dms = emulator.calls.filter(
      (c) =>
        c.seq > since &&
        c.method === "chat.postMessage" &&
        String(c.args.text).includes("refused to renew"),
    );
    expect(dms.map((c) => c.args.channel)).toEqual([USERS.admin]);
  }, 60_000);
});
