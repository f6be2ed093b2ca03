import { randomBytes } from "node:crypto";
import { connect } from "node:net";
import { type SlackEmulator, startSlackEmulator } from "@onair/slack-emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../scripts/ports.ts";
import { HOME_ACTIONS } from "../../src/ids.ts";
import { botScopes } from "../../src/slack/scopes.ts";
import { CHANNELS, USERS } from "../helpers/app-harness.ts";
import { runMain, tempDir } from "../helpers/main-process.ts";

/**
 * Ready, then open: `npm start`'s entry with Slack credentials in a child process, and Slack's
 * requests sent at the first moment its port accepts a connection. Each is served or answered
 * 503 (Slack tries again); never a 2xx that no listener saw. `/readyz` says 503 until every part
 * is up, and a clean start logs nothing at error level.
 */

const SECRET = "ready-then-open-signing-secret";
let emulator: SlackEmulator;

beforeAll(async () => {
  emulator = await startSlackEmulator({
    signingSecret: SECRET,
    seed: { botScopes: botScopes() },
  });
});
afterAll(async () => {
  await emulator?.close();
});

/** Resolves the moment a TCP connection to the port succeeds (tried again at once until then). */
function firstConnect(port: number, until: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const sock = connect(port, "127.0.0.1");
      sock.once("connect", () => {
        sock.destroy();
        resolve();
      });
      sock.once("error", () => {
        sock.destroy();
        if (Date.now() > until) reject(new Error(`port ${port} never accepted a connection`));
        else setImmediate(attempt);
      });
    };
    attempt();
  });
}

/** A button the App Home would hold, published as the bot (the action must exist in a view). */
async function publishHome(user: string): Promise<void> {
  const res = await fetch(`${emulator.apiUrl}views.publish`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${emulator.botToken}`,
      "content-type": "application/json; charset=utf-8",
    },
    body: JSON.stringify({
      user_id: user,
      view: {
        type: "home",
        blocks: [
          {
            type: "actions",
            elements: [
              {
                type: "button",
                action_id: HOME_ACTIONS.schedule,
                text: { type: "plain_text", text: "Schedule" },
              },
            ],
          },
        ],
      },
    }),
  });
  expect(((await res.json()) as { ok: boolean }).ok).toBe(true);
}

describe("ready, then open (src/main.ts with Slack credentials)", { timeout: 90_000 }, () => {
  it("answers 503 until every part is up, then serves; no request acknowledged unheard", async () => {
    await publishHome(USERS.admin);
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    emulator.setAppUrl(origin);
    const cwd = tempDir();
    const p = runMain(
      {
        PORT: String(port),
        LOG_LEVEL: "info",
        SLACK_BOT_TOKEN: emulator.botToken,
        SLACK_SIGNING_SECRET: SECRET,
        SLACK_API_URL: emulator.apiUrl,
        ONAIR_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
        ONAIR_SANDBOX: "1",
        // A file store: the live engine runs on its own thread, as in production.
        STORE_URL: "sqlite://data/onair.sqlite",
      },
      cwd,
    );
    await firstConnect(port, Date.now() + 60_000);

    // All at once, at the first moment the port accepts.
    const since = emulator.calls.length;
    const sent = await Promise.all([
      fetch(`${origin}/readyz`).then((r) => r.status),
      emulator.driver
        .slashCommand({ user: USERS.member, channel: CHANNELS.general, text: "help" })
        .then((r) => r.status),
      emulator.driver
        .blockAction({ user: USERS.admin, action_id: HOME_ACTIONS.schedule })
        .then((r) => r.status),
      emulator.driver
        .event({ type: "app_home_opened", user: USERS.omar, tab: "home" })
        .then((r) => r.status),
      fetch(`${origin}/webhooks/events/sub-unknown`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      }).then(async (r) => ({ status: r.status, body: await r.text() })),
    ]);
    const [readyz, command, action, event, webhook] = sent;
    expect(readyz, "the first /readyz").toBe(503);
    expect(webhook.status, webhook.body).toBe(503);
    expect(webhook.body).toMatch(/starting/);

    // Whatever was acknowledged was heard: its listener's effect shows in Slack.
    const effects = {
      command: (c: (typeof emulator.calls)[number]) =>
        c.method === "response_url" && String(c.args.text).includes("/onair schedule"),
      action: (c: (typeof emulator.calls)[number]) =>
        c.method === "views.open" && c.tokenKind === "bot",
      event: (c: (typeof emulator.calls)[number]) =>
        c.method === "views.publish" && c.args.user_id === USERS.omar,
    };
    const statuses = { command, action, event };
    for (const [name, status] of Object.entries(statuses)) {
      expect([200, 503], `${name}: ${status}`).toContain(status);
      if (status === 200) {
        await emulator.waitForCall(effects[name as keyof typeof effects], {
          since,
          timeoutMs: 10_000,
        });
      }
    }

    // /readyz turns 200 once ready; from then on the same requests are served.
    const until = Date.now() + 60_000;
    while ((await fetch(`${origin}/readyz`)).status !== 200) {
      expect(Date.now() < until, "never ready").toBe(true);
      await new Promise((r) => setTimeout(r, 50));
    }
    const after = emulator.calls.length;
    expect(
      (
        await emulator.driver.slashCommand({
          user: USERS.member,
          channel: CHANNELS.general,
          text: "help",
        })
      ).status,
    ).toBe(200);
    await emulator.waitForCall(effects.command, { since: after, timeoutMs: 10_000 });
    expect(
      (await emulator.driver.event({ type: "app_home_opened", user: USERS.omar, tab: "home" }))
        .status,
    ).toBe(200);
    await emulator.waitForCall(effects.event, { since: after, timeoutMs: 10_000 });

    p.child.kill("SIGTERM");
    expect(await p.exited).toBe(0);
    // Every line is a log line for a collector, the start and stop lines too.
    const plain = p
      .out()
      .split("\n")
      .filter((l) => l.trim() !== "" && !l.startsWith("{"));
    expect(plain).toEqual([]);
    expect(p.out()).toMatch(/"msg":"serving Slack on port \d+/);
    expect(p.out()).toMatch(/"msg":"SIGTERM, shutting down"/);
    const logged = p
      .out()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as { level: string; msg?: string });
    expect(logged.filter((l) => l.level === "error" || l.level === "fatal")).toEqual([]);
    expect(p.err()).toBe("");
  });
});
