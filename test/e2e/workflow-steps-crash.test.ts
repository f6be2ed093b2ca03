import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type SlackEmulator, startSlackEmulator } from "@onair/slack-emulator";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type SandboxServer, startSandboxServer } from "../../src/sandbox/index.ts";
import { STEP_DEFINITIONS, STEPS } from "../../src/slack/functions/definitions.ts";
import { botScopes } from "../../src/slack/scopes.ts";
import { createCipher, openStore } from "../../src/store/index.ts";
import { TEAM, USERS } from "../helpers/app-harness.ts";
import {
  type ChildApp,
  childAppEnv,
  eventually,
  freePort,
  seedExternal,
  spawnApp,
} from "../helpers/live-fixtures.ts";

/**
 * `kill -9` of the app between creating the event and completing the step: Slack has the event's
 * step still running, the events service has the event. The next process finds the run in the
 * store and completes it once, with the outputs of the event made, and makes no second event.
 */

const HOUR = 3_600_000;
let emulator: SlackEmulator;
let sandbox: SandboxServer;
let dir: string;
const children: ChildApp[] = [];
let env: () => Promise<Record<string, string>>;

beforeAll(async () => {
  const signingSecret = randomBytes(16).toString("hex");
  const key = randomBytes(32);
  dir = mkdtempSync(join(tmpdir(), "onair-step-crash-"));
  const storeUrl = `sqlite://${join(dir, "onair.sqlite")}`;
  emulator = await startSlackEmulator({
    signingSecret,
    seed: { botScopes: botScopes(), functions: STEP_DEFINITIONS },
  });
  sandbox = await startSandboxServer();
  // The workspace's events credentials (the external sandbox's), as an admin saved them.
  const store = await openStore(storeUrl, { cipher: createCipher(key) });
  await seedExternal(store, {
    team: TEAM,
    organizer: USERS.omar,
    eventsBaseUrl: sandbox.eventsBaseUrl,
    title: "Seeded beside",
  });
  await store.close();
  env = async () =>
    childAppEnv({
      port: await freePort(),
      signingSecret,
      emulator,
      sandbox,
      storeUrl,
      key,
      logLevel: "info",
    });
});

afterAll(async () => {
  for (const c of children) await c.stop().catch(() => undefined);
  await emulator?.close();
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function spawn(): Promise<ChildApp> {
  const child = await spawnApp(await env());
  children.push(child);
  emulator.setAppUrl(child.origin);
  return child;
}

const creates = () =>
  sandbox.sandbox.control.log().filter((e) => e.method === "POST" && /\/events$/.test(e.path))
    .length;

it("a crash between creating the event and completing: one event, one completion", async () => {
  const first = await spawn();
  // Slack fails the completion, and the process dies right there: the event is made, the step
  // is not completed.
  emulator.throttle({
    method: "functions.completeSuccess",
    times: 100,
    retryAfterSec: 0,
    error: "internal_error",
  });
  let killed: Promise<void> | undefined;
  const off = emulator.onCall((c) => {
    if (c.method === "functions.completeSuccess") killed ??= first.kill();
  });
  const before = creates();
  const start = Date.UTC(new Date().getUTCFullYear() + 1, 0, 15, 15);
  const r = await emulator.driver.functionExecuted({
    callback_id: STEPS.schedule,
    inputs: {
      title: "Crash-proof all-hands",
      start: start / 1000,
      end: (start + HOUR) / 1000,
      organizer: USERS.omar,
    },
  });
  expect(r.status).toBe(200);
  const ex = r.execution;
  // (a flag: `eventually` would wait on the promise itself)
  await eventually(() => (killed ? true : undefined), "the kill");
  await killed;
  off();
  emulator.clearThrottles();
  expect(ex.state).toBe("running");
  expect(creates()).toBe(before + 1);

  // The next process completes the run it finds, with the installation's bot token.
  await spawn();
  await eventually(() => (ex.state === "running" ? undefined : true), "the completion", 30_000);
  expect(ex.state).toBe("completed");
  expect(ex.completions).toEqual([{ method: "functions.completeSuccess", ok: true, token: "bot" }]);
  const out = ex.outputs as { event_id: string; start: number };
  expect(out.start).toBe(start / 1000);
  expect(creates()).toBe(before + 1);

  // The same execution delivered again (a new event id): nothing more is made or completed.
  await emulator.driver.event({
    type: "function_executed",
    function: { callback_id: STEPS.schedule },
    inputs: ex.inputs,
    function_execution_id: ex.id,
    workflow_execution_id: ex.workflowExecutionId,
    bot_access_token: ex.token,
  });
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  expect(creates()).toBe(before + 1);
  expect(ex.completions).toHaveLength(1);
  // The function's token reached no log of either process.
  for (const c of children) expect(c.output.join("")).not.toContain(ex.token);
});
