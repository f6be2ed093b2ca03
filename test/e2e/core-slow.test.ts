import type { WebAPICallError } from "@slack/web-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SETTINGS_ACTIONS, SETTINGS_FIELDS, SETTINGS_VIEW, SUBCOMMANDS } from "../../src/ids.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { createSecretScanner } from "../helpers/secrets.ts";

/**
 * Slack's clock against slow neighbours. Bolt answers 404 by itself when a listener has not
 * acked within 2.5 s (unhandledRequestTimeoutMillis), so a 200 is proof of an ack in time; the
 * emulator refuses views.open with a trigger older than 3 s, so an ok views.open is proof the
 * modal went out while its trigger was valid.
 */

let h: Harness;

/** The settings form replacing its placeholder (the modal opens at once, then fills). */
function settingsFilled(since: number) {
  return h.emulator.waitForCall(
    (c) =>
      c.method === "views.update" &&
      c.ok &&
      (c.args.view as { callback_id?: string } | undefined)?.callback_id === SETTINGS_VIEW,
    { since },
  );
}
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  h?.sandbox.control.clearFaults();
  await h?.close();
});

const ARGS: Partial<Record<(typeof SUBCOMMANDS)[number], string>> = {
  edit: "ev-1",
  cancel: "ev-1",
  show: "ev-1",
  notify: "ev-1 #events",
  mute: "ev-1",
};

describe("with every upstream call delayed by 10 s", () => {
  beforeAll(() => {
    for (const service of ["relay", "events"] as const) {
      h.sandbox.control.addFault({ service, delayMs: 10_000, times: 100_000 });
    }
  });

  it("every subcommand still acks in time", async () => {
    const results = await Promise.all(
      SUBCOMMANDS.map(async (sub) => {
        const res = await h.driver.slashCommand({
          user: USERS.admin,
          channel: CHANNELS.general,
          text: `${sub} ${ARGS[sub] ?? ""}`.trim(),
        });
        return [sub, res.status] as const;
      }),
    );
    expect(results).toEqual(SUBCOMMANDS.map((s) => [s, 200]));
  });

  it("settings opens its modal while the trigger is valid, and Check and Save ack in time", async () => {
    const since = h.emulator.calls.length;
    const res = await h.driver.slashCommand({
      user: USERS.admin,
      channel: CHANNELS.events,
      text: "settings",
    });
    expect(res.status).toBe(200);
    const opened = await h.emulator.waitForCall(
      (c) => c.method === "views.open" && c.args.trigger_id === res.triggerId,
      { since },
    );
    expect(opened.ok).toBe(true);
    await settingsFilled(since);

    const check = await h.driver.blockAction({
      user: USERS.admin,
      action_id: SETTINGS_ACTIONS.check,
    });
    expect(check.status).toBe(200);
    // The modal says at once that the check runs; the answer comes when the services do.
    const running = await h.emulator.waitForCall(
      (c) => c.method === "views.update" && JSON.stringify(c.args.view).includes("Checking"),
      { since },
    );
    expect(running.ok).toBe(true);

    const saved = await h.driver.viewSubmission({
      user: USERS.admin,
      values: { [SETTINGS_FIELDS.longestToken]: "3d" },
    });
    expect(saved.status).toBe(200);
    expect(saved.outcome.action).toBe("closed");
    await expect
      .poll(async () => (await h.app.store.settings.get(TEAM))?.longestTokenMs)
      .toBe(3 * 86_400_000);
  });
});

describe("interactive calls beside bulk posting", () => {
  beforeAll(() => {
    h.sandbox.control.clearFaults();
  });

  it("a 429 storm on the bulk client never stalls a modal or an ephemeral", async () => {
    h.emulator.throttle({
      method: "chat.postMessage",
      channel: CHANNELS.events,
      times: 1_000,
      retryAfterSec: 30,
    });
    const bulk = await h.app.deps.bulkClient(TEAM);
    const posts = await Promise.allSettled(
      Array.from({ length: 5 }, (_, i) =>
        bulk.chat.postMessage({ channel: CHANNELS.events, text: `card ${i}` }),
      ),
    );
    // The bulk client hands the 429 back (the outbox paces); it neither waits nor retries.
    for (const p of posts) {
      expect(p.status).toBe("rejected");
      if (p.status === "rejected") {
        expect((p.reason as WebAPICallError).code).toBe("slack_webapi_rate_limited_error");
      }
    }

    const since = h.emulator.calls.length;
    const res = await h.driver.slashCommand({
      user: USERS.admin,
      channel: CHANNELS.events,
      text: "settings",
    });
    expect(res.status).toBe(200);
    const opened = await h.emulator.waitForCall(
      (c) => c.method === "views.open" && c.args.trigger_id === res.triggerId,
      { since },
    );
    expect(opened.ok).toBe(true);
    await settingsFilled(since);
    const saved = await h.driver.viewSubmission({ user: USERS.admin });
    expect(saved.outcome.action).toBe("closed");
    const ephemeral = await h.emulator.waitForCall(
      (c) => c.method === "chat.postEphemeral" && c.args.channel === CHANNELS.events,
      { since },
    );
    expect(ephemeral.ok).toBe(true);
    h.emulator.clearThrottles();
  });

  it("the interactive client waits out Slack's Retry-After and the modal still opens in time", async () => {
    h.emulator.throttle({ method: "views.open", times: 1, retryAfterSec: 1 });
    const since = h.emulator.calls.length;
    const res = await h.driver.slashCommand({
      user: USERS.admin,
      channel: CHANNELS.general,
      text: "settings",
    });
    expect(res.status).toBe(200);
    const opened = await h.emulator.waitForCall(
      (c) => c.method === "views.open" && c.ok && c.args.trigger_id === res.triggerId,
      { since, timeoutMs: 5_000 },
    );
    const tries = h.emulator.calls
      .slice(since)
      .filter((c) => c.method === "views.open" && c.args.trigger_id === res.triggerId);
    expect(tries.map((c) => c.status)).toEqual([429, 200]);
    expect(opened.time - (tries[0]?.time ?? 0)).toBeGreaterThanOrEqual(1_000);
  });

  it("leaks no secret into logs or Slack calls", () => {
    const scan = createSecretScanner();
    for (const line of h.logs) scan.add("log", line);
    for (const c of h.emulator.calls) scan.add(`slack ${c.method}`, JSON.stringify(c));
    scan.assertNoSecrets([...h.secrets, "sandbox-secret"]);
  });
});
