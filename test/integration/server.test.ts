import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { signSlackRequest } from "@onair/slack-emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { SLACK_BODY_LIMIT } from "../../src/http/handlers/slack.ts";
import { CHANNELS, type Harness, startHarness, USERS } from "../helpers/app-harness.ts";
import { createSecretScanner } from "../helpers/secrets.ts";

let h: Harness;
let signingSecret: string;
beforeAll(async () => {
  h = await startHarness();
  signingSecret = h.emulator.signingSecret;
});
afterAll(async () => {
  await h?.close();
});

interface Sent {
  status: number;
  body: string;
}

/**
 * POSTs to /slack/events with no content-length (chunked), `chunks` pieces of `size` bytes,
 * signed over the whole body, and resolves with the answer as soon as it comes: the app may
 * answer a body over the cap before the sender has finished.
 */
function sendChunked(body: Buffer, chunkSize: number): Promise<Sent> {
  const url = new URL("/slack/events", h.app.origin);
  const ts = Math.floor(Date.now() / 1000);
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "x-slack-request-timestamp": String(ts),
        "x-slack-signature": signSlackRequest(signingSecret, ts, body.toString("utf8")),
        "transfer-encoding": "chunked",
      },
    });
    let answered = false;
    req.on("response", (res) => {
      answered = true;
      const parts: Buffer[] = [];
      res.on("data", (c: Buffer) => parts.push(c));
      res.on("end", () => {
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString("utf8") });
        req.destroy();
      });
    });
    req.on("error", (err) => {
      if (!answered) reject(err);
    });
    let offset = 0;
    const pump = () => {
      while (offset < body.length && !answered) {
        const piece = body.subarray(offset, offset + chunkSize);
        offset += piece.length;
        if (!req.write(piece)) {
          req.once("drain", pump);
          return;
        }
      }
      if (!answered) req.end();
    };
    pump();
  });
}

function metricValue(text: string, name: string, labels: Record<string, string>): number {
  const total = text
    .split("\n")
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .filter((line) => Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
    .map((line) => Number(line.slice(line.lastIndexOf(" ") + 1)));
  return total.reduce((a, b) => a + b, 0);
}

describe("the app's HTTP server", () => {
  it("caps a chunked Slack body with no content-length and runs nothing", async () => {
    const since = h.emulator.calls.length;
    const form = new URLSearchParams({
      command: "/onair",
      text: "help",
      team_id: "T0ONAIR",
      user_id: USERS.member,
      channel_id: CHANNELS.general,
      response_url: `${h.emulator.origin}/response/nope`,
      trigger_id: "1.2.3",
      padding: "x".repeat(SLACK_BODY_LIMIT + 10),
    }).toString();
    const res = await sendChunked(Buffer.from(form), 64 * 1024);
    expect(res.status).toBe(413);
    expect(res.body).toContain(`over ${SLACK_BODY_LIMIT} bytes`);
    await new Promise((r) => setTimeout(r, 100));
    expect(h.emulator.calls.slice(since)).toEqual([]);
    const health = await fetch(`${h.app.origin}/healthz`);
    expect(health.status).toBe(200);
  });

  it("refuses a declared content-length over the cap at once", async () => {
    const res = await fetch(`${h.app.origin}/slack/events`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-slack-request-timestamp": String(Math.floor(Date.now() / 1000)),
      },
      body: "x".repeat(SLACK_BODY_LIMIT + 1),
    });
    expect(res.status).toBe(413);
  });

  it("serves a chunked body under the cap like any other", async () => {
    const since = h.emulator.calls.length;
    const { responseUrl } = await h.driver.slashCommand({
      user: USERS.member,
      channel: CHANNELS.general,
      text: "nothing-yet",
    });
    // The same command again, chunked, with a fresh response_url from the emulator.
    const fresh = h.emulator.workspace.createResponseUrl({
      channel: CHANNELS.general,
      user: USERS.member,
    });
    expect(responseUrl).toBeDefined();
    const form = new URLSearchParams({
      command: "/onair",
      text: "help",
      team_id: "T0ONAIR",
      team_domain: "onair-playground",
      user_id: USERS.member,
      user_name: "mia",
      channel_id: CHANNELS.general,
      channel_name: "general",
      api_app_id: "A0ONAIR",
      response_url: fresh,
      trigger_id: h.emulator.workspace.issueTriggerId(USERS.member),
    }).toString();
    const res = await sendChunked(Buffer.from(form), 7);
    expect(res.status).toBe(200);
    const answer = await h.emulator.waitForCall(
      (c) => c.method === "response_url" && String(c.args.text).startsWith("*On Air*"),
      { since },
    );
    expect(answer.ok).toBe(true);
  });

  it("refuses unsigned, stale, future and tampered interactions and events with 401", async () => {
    for (const forge of [
      "bad-signature",
      "stale-timestamp",
      "future-timestamp",
      "tampered-body",
      "no-signature",
      "no-timestamp",
    ] as const) {
      const since = h.emulator.calls.length;
      const ev = await h.driver.event({ type: "app_uninstalled" }, { forge });
      expect(ev.status, `event ${forge}`).toBe(401);
      const sc = await h.driver.shortcut({
        callback_id: "schedule_event",
        user: USERS.admin,
        forge,
      });
      expect(sc.status, `shortcut ${forge}`).toBe(401);
      await new Promise((r) => setTimeout(r, 30));
      expect(h.emulator.calls.slice(since)).toEqual([]);
    }
    // Nothing was uninstalled: the workspace still answers.
    const ok = await h.driver.slashCommand({
      user: USERS.member,
      channel: CHANNELS.general,
      text: "help",
    });
    expect(ok.status).toBe(200);
  });

  it("/metrics counts requests, acks and upstream calls", async () => {
    const since = h.emulator.calls.length;
    await h.driver.slashCommand({ user: USERS.omar, channel: CHANNELS.general, text: "link" });
    await h.emulator.waitForCall(
      (c) => c.method === "response_url" && String(c.args.text).startsWith("You're linked"),
      { since },
    );
    const res = await fetch(`${h.app.origin}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    const text = await res.text();
    expect(
      metricValue(text, "onair_http_requests_total", { route: "/slack/events", status: "200" }),
    ).toBeGreaterThanOrEqual(3);
    expect(
      metricValue(text, "onair_http_requests_total", { route: "/slack/events", status: "401" }),
    ).toBeGreaterThanOrEqual(12);
    expect(
      metricValue(text, "onair_slack_ack_seconds_count", { kind: "command" }),
    ).toBeGreaterThanOrEqual(3);
    expect(
      metricValue(text, "onair_slack_ack_seconds_count", { kind: "http" }),
    ).toBeGreaterThanOrEqual(3);
    // The interactive client's Web API calls (users.info during link), by method and outcome.
    expect(
      metricValue(text, "onair_slack_calls_total", { method: "users.info", outcome: "ok" }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      metricValue(text, "onair_upstream_calls_total", { service: "events", status: "200" }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      metricValue(text, "onair_upstream_call_seconds_count", { service: "events" }),
    ).toBeGreaterThanOrEqual(1);
  });

  it("answers a request target that is no URL with 400 and stays up", async () => {
    const { port } = new URL(h.app.origin);
    const statusLine = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), "127.0.0.1", () => {
        socket.write("GET //[ HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
      });
      let text = "";
      socket.on("data", (d) => {
        text += String(d);
      });
      socket.on("end", () => resolve(text.split("\r\n")[0] ?? ""));
      socket.on("error", reject);
    });
    expect(statusLine).toBe("HTTP/1.1 400 Bad Request");
    expect((await fetch(`${h.app.origin}/healthz`)).status).toBe(200);
  });

  it("/healthz and /readyz answer, and /readyz says 503 when the store does not", async () => {
    expect((await fetch(`${h.app.origin}/healthz`)).status).toBe(200);
    expect((await fetch(`${h.app.origin}/readyz`)).status).toBe(200);
    await h.app.store.close();
    const down = await fetch(`${h.app.origin}/readyz`);
    expect(down.status).toBe(503);
    expect(await down.json()).toEqual({ ok: false, error: "the store does not answer" });
    expect((await fetch(`${h.app.origin}/healthz`)).status).toBe(200);
  });

  it("logs no secret", () => {
    const scan = createSecretScanner();
    for (const line of h.logs) scan.add("log", line);
    scan.assertNoSecrets(h.secrets);
  });
});

describe("starting the app", () => {
  it("refuses to serve a Slack workspace without a signing secret", async () => {
    const config = loadConfig({
      PORT: "0",
      SLACK_SIGNING_SECRET: randomBytes(16).toString("hex"),
      SLACK_BOT_TOKEN: "xoxb-test-token",
      ONAIR_SANDBOX: "1",
      STORE_URL: "memory://core-server-start",
      ONAIR_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      LOG_LEVEL: "silent",
    });
    const emptied = { ...config, slack: { ...config.slack, signingSecret: "" } };
    await expect(startApp({ config: emptied, host: "127.0.0.1" })).rejects.toThrow(
      "SLACK_SIGNING_SECRET is required",
    );
    const unset = { ...config, slack: { ...config.slack, signingSecret: undefined } };
    await expect(startApp({ config: unset, host: "127.0.0.1" })).rejects.toThrow(
      "SLACK_SIGNING_SECRET is required",
    );
  });

  it("lets go of the store it opened when its port is taken", async () => {
    const busy = createServer();
    await new Promise<void>((done) => busy.listen(0, "127.0.0.1", done));
    const dir = mkdtempSync(join(tmpdir(), "onair-port-taken-"));
    try {
      const file = join(dir, "onair.db");
      const config = loadConfig({
        PORT: String((busy.address() as AddressInfo).port),
        SLACK_SIGNING_SECRET: signingSecret,
        SLACK_API_URL: h.emulator.apiUrl,
        SLACK_BOT_TOKEN: h.emulator.botToken,
        ONAIR_SANDBOX: "1",
        STORE_URL: `sqlite://${file}`,
        ONAIR_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
        LOG_LEVEL: "silent",
      });
      await expect(
        startApp({ config, host: "127.0.0.1", liveEngine: "inline", reconcile: false }),
      ).rejects.toMatchObject({ code: "EADDRINUSE" });
      // The store was opened (its log is written at the key's check) and is closed again: SQLite
      // removes a database's write-ahead log when its last connection closes.
      expect(existsSync(file)).toBe(true);
      expect(existsSync(`${file}-wal`)).toBe(false);
    } finally {
      busy.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
