import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Playground } from "../../src/playground/runtime.ts";
import { startTestPlayground } from "../helpers/playground.ts";

/** The playground runs a Workflow Builder step with the inputs given and shows its completion. */

const OMAR = "U0OMAR0ORG";
let dir: string;
let pg: Playground;
const logs: string[] = [];

async function step(body: unknown) {
  const res = await fetch(`${pg.app.origin}/playground/api/step`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "onair-pg-steps-"));
  pg = await startTestPlayground(dir, logs);
});

afterAll(async () => {
  await pg?.close();
  rmSync(dir, { recursive: true, force: true });
});

it("runs schedule_live_event and get_event_attendance and shows their completions", async () => {
  const start = Math.floor(Date.now() / 1000) + 2 * 86_400;
  const scheduled = await step({
    callback_id: "schedule_live_event",
    inputs: { title: "Playground all-hands", start, end: start + 3_600, organizer: OMAR },
  });
  expect(scheduled.status).toBe(200);
  expect(scheduled.body.state).toBe("completed");
  const outputs = scheduled.body.outputs as { event_id: string; join_url: string; start: number };
  expect(outputs.start).toBe(start);
  expect(outputs.join_url).toMatch(/^https:\/\//);
  const read = await step({
    callback_id: "get_event_attendance",
    inputs: { event_id: outputs.event_id },
  });
  expect(read.body).toMatchObject({
    state: "completed",
    outputs: { peak: 0, unique: 0, present_at_end: 0, state: "NOT_STARTED" },
  });
  const refused = await step({
    callback_id: "schedule_live_event",
    inputs: { title: "Past", start: start - 4 * 86_400, end: start, organizer: OMAR },
  });
  expect(refused.body).toMatchObject({ state: "failed" });
  expect(String(refused.body.error)).toMatch(/^The start input is in the past/);
});

it("refuses inputs Workflow Builder would not send, and steps it does not have", async () => {
  const missing = await step({ callback_id: "schedule_live_event", inputs: { title: "x" } });
  expect(missing.status).toBe(400);
  expect(String(missing.body.error)).toMatch(/start is required/);
  const unknown = await step({ callback_id: "nope", inputs: {} });
  expect(unknown.status).toBe(400);
});
