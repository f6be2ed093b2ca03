import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createReadiness } from "../../src/http/readiness.ts";
import { HOME_ACTIONS } from "../../src/ids.ts";
import { type Harness, startHarness, USERS } from "../helpers/app-harness.ts";

/**
 * A stop mirrors the start: no new work is taken, the work in flight (a request, and a Slack
 * listener still running after its ack) finishes, and only then do the engine and store close.
 */

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function publishHome(harness: Harness, user: string): Promise<void> {
  const res = await fetch(`${harness.emulator.apiUrl}views.publish`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${harness.emulator.botToken}`,
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

describe("stopping", { timeout: 30_000 }, () => {
  it("waits for a listener still running after its ack before it closes", async () => {
    h = await startHarness();
    await publishHome(h, USERS.admin);
    const SLOW_MS = 1_500;
    // The listener acks at once, then waits this long for Slack's answer to views.open.
    h.emulator.slow({ method: "views.open", times: 1, ms: SLOW_MS });
    const since = h.emulator.calls.length;
    const res = await h.driver.blockAction({ user: USERS.admin, action_id: HOME_ACTIONS.schedule });
    expect(res.status).toBe(200);
    await h.emulator.waitForCall((c) => c.method === "views.open", { since, timeoutMs: 5_000 });
    const order: string[] = [];
    const answered = new Promise<void>((done) =>
      setTimeout(() => {
        order.push("views.open answered");
        done();
      }, SLOW_MS),
    );
    const from = h.logs.length;
    await h.app.close();
    order.push("closed");
    await answered;
    expect(order).toEqual(["views.open answered", "closed"]);
    const lines = h.logs
      .slice(from)
      .join("")
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l) as { level: string; msg: string });
    expect(lines.filter((l) => l.level === "error" || l.level === "fatal")).toEqual([]);
    expect(lines.filter((l) => /in flight|error while closing/.test(l.msg))).toEqual([]);
  });

  it("answers 503 to Slack, webhooks and /readyz once stopping, with the reason", async () => {
    h = await startHarness();
    expect((await fetch(`${h.app.origin}/readyz`)).status).toBe(200);
    // A request still arriving when the stop begins: the stop waits for it, and what comes
    // meanwhile is told the app is stopping.
    const { port } = new URL(h.app.origin);
    const sock = connect(Number(port), "127.0.0.1");
    await new Promise<void>((done) => sock.once("connect", () => done()));
    let received = "";
    sock.on("data", (d) => {
      received += String(d);
    });
    const body = "ssl_check=1&token=x";
    sock.write(
      `POST /slack/events HTTP/1.1\r\nhost: app\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
    );
    await new Promise((r) => setTimeout(r, 50));
    const closing = h.app.close();
    await new Promise((r) => setTimeout(r, 50));
    const answers = [
      await fetch(`${h.app.origin}/readyz`),
      await fetch(`${h.app.origin}/slack/events`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      }),
      await fetch(`${h.app.origin}/webhooks/events/sub-x`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      }),
    ];
    for (const a of answers) {
      expect(a.status).toBe(503);
      expect(await a.text()).toMatch(/shutting down/);
    }
    sock.write(body.slice(5));
    const until = Date.now() + 5_000;
    while (!/^HTTP\/1\.1 200/.test(received) && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(received).toMatch(/^HTTP\/1\.1 200/);
    sock.destroy();
    await closing;
  });

  it("a closed gate counts work in flight until it settles", async () => {
    const gate = createReadiness();
    expect(gate.refusal()).toMatch(/starting up/);
    gate.open();
    expect(gate.refusal()).toBeUndefined();
    let finish: () => void = () => {};
    gate.track(new Promise<void>((done) => (finish = done)));
    gate.close();
    expect(gate.refusal()).toMatch(/shutting down/);
    expect(await gate.drained(20)).toBe(false);
    const drained = gate.drained(5_000);
    finish();
    expect(await drained).toBe(true);
  });
});
