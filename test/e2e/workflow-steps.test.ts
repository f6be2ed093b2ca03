import { DEFAULT_USERS, type FunctionExecution } from "@onair/slack-emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STEP_DEFINITIONS, STEPS } from "../../src/slack/functions/definitions.ts";
import { STEP_MEMORY_MS, sweepSteps } from "../../src/slack/functions/run.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { eventually } from "../helpers/live-fixtures.ts";
import { future, getUpstream, HOUR, waitFor } from "./organizer-helpers.ts";

/**
 * On Air's Workflow Builder steps, run by the emulator as a workflow runs them
 * (function_executed), completed by the app with functions.completeSuccess / completeError.
 */

const STRANGER = "U0STRANGER";
let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    seed: {
      functions: STEP_DEFINITIONS,
      users: [
        ...DEFAULT_USERS,
        {
          id: STRANGER,
          name: "sam",
          real_name: "Sam Elsewhere",
          tz: "Europe/Berlin",
          // An admin (so the policy lets them schedule) whose address the events service does
          // not know (the sandbox knows example.com).
          is_admin: true,
          email: "sam@elsewhere.test",
        },
      ],
    },
  });
});
afterAll(async () => {
  await h?.close();
});

const sec = (ms: number) => Math.floor(ms / 1000);

/** Runs a step as a workflow does; resolves once the app completed it. */
async function runStep(callbackId: string, inputs: Record<string, unknown>) {
  const r = await h.driver.functionExecuted({ callback_id: callbackId, inputs });
  expect(r.status).toBe(200);
  expect(r.late).toBe(false);
  const ex = r.execution;
  await eventually(() => (ex.state === "running" ? undefined : true), `${callbackId} completed`);
  return ex;
}

function scheduleInputs(title: string, start: number, extra: Record<string, unknown> = {}) {
  return {
    title,
    start: sec(start),
    end: sec(start + HOUR),
    organizer: USERS.omar,
    ...extra,
  };
}

/** The outputs and the facts behind them of a step that scheduled an event. */
async function scheduled(ex: FunctionExecution) {
  expect(ex.state).toBe("completed");
  const out = ex.outputs as { event_id: string; join_url: string; start: number };
  const record = await h.app.store.events.get(TEAM, out.event_id);
  expect(record).toBeDefined();
  const event = await getUpstream(h, "omar@example.com", out.event_id);
  return { out, record: record!, event };
}

describe("schedule_live_event", () => {
  it("schedules as its organizer: outputs, the card and the reminders as from /onair schedule", async () => {
    const start = future(2);
    const since = h.emulator.calls.length;
    const ex = await runStep(
      STEPS.schedule,
      scheduleInputs("Monday all-hands", start, {
        description: "The week ahead",
        channel: CHANNELS.events,
      }),
    );
    const { out, record, event } = await scheduled(ex);
    expect(out).toEqual({
      event_id: event.id,
      join_url: `https://${event.attendeeUrl}`,
      start: sec(start),
    });
    expect(event).toMatchObject({
      title: "Monday all-hands",
      description: "The week ahead",
      start,
      end: start + HOUR,
    });
    expect(record.organizer).toBe(USERS.omar);
    // Completed once, with the function's own token.
    expect(ex.completions).toEqual([
      { method: "functions.completeSuccess", ok: true, token: "function" },
    ]);
    // The channel input gets the public card and the reminders (an hour and ten minutes before).
    const card = await waitFor(
      h,
      (c) =>
        c.method === "chat.postMessage" &&
        c.args.channel === CHANNELS.events &&
        /Monday all-hands/.test(JSON.stringify(c.args)),
      since,
    );
    expect(JSON.stringify(card.args)).toContain(event.attendeeUrl);
    expect(JSON.stringify(card.args)).not.toContain(event.moderatorUrl);
    const reminders = await eventually(() => {
      const r = [...h.emulator.workspace.scheduled.values()].filter(
        (s) => s.channel === CHANNELS.events && s.text.includes("Monday all-hands"),
      );
      return r.length === 2 ? r : undefined;
    }, "two reminders");
    expect(reminders.map((r) => r.post_at).sort()).toEqual([
      sec(start - HOUR),
      sec(start - 10 * 60_000),
    ]);
    // The organizer alone gets the links and passcodes, in their DM.
    await waitFor(
      h,
      (c) =>
        c.method === "chat.postMessage" &&
        c.args.channel === USERS.omar &&
        JSON.stringify(c.args).includes(event.moderatorUrl),
      since,
    );
    // No secret in the outputs (a workflow's activity shows them), none in the log.
    const shown = JSON.stringify(ex.outputs);
    expect(Object.keys(ex.outputs ?? {}).sort()).toEqual(["event_id", "join_url", "start"]);
    for (const secret of [event.moderatorUrl, event.panelistUrl]) {
      expect(shown).not.toContain(secret);
    }
    // The passcode is a few digits: looked for as a number of its own, not inside another one
    // (the start's epoch seconds held the same four digits once).
    expect(shown).not.toMatch(new RegExp(`(?<![0-9])${event.participantPasscode}(?![0-9])`));
    expect(h.logs.some((l) => l.includes(ex.token))).toBe(false);
  });

  it.each([
    [
      "a member the policy leaves out",
      () => scheduleInputs("Refused", future(2), { organizer: USERS.member }),
      /^The organizer input: In this workspace only workspace admins may schedule events/,
    ],
    [
      "a start in the past",
      () => scheduleInputs("Past", Date.now() - 2 * HOUR),
      /^The start input is in the past/,
    ],
    [
      "an end before the start",
      () => ({ ...scheduleInputs("Backwards", future(2)), end: sec(future(2) - HOUR) }),
      /^The end input is not after the start/,
    ],
    [
      "an organizer whose e-mail the events service does not know",
      () => scheduleInputs("Stranger", future(2), { organizer: STRANGER }),
      /^The organizer input: sam@elsewhere\.test is not a registered user/,
    ],
  ])("fails the step for %s, naming the input; nothing is made", async (_name, inputs, reason) => {
    const s = await h.app.store.settings.getOrDefault(TEAM);
    // Only admins may schedule (the member's case); the others are refused for their own reason.
    await h.app.store.settings.put(TEAM, {
      ...s,
      policy: { ...s.policy, whoMaySchedule: "admins" },
    });
    try {
      const before = (await h.app.store.events.list(TEAM)).length;
      h.sandbox.control.clearLog();
      const ex = await runStep(STEPS.schedule, inputs());
      expect(ex.state).toBe("failed");
      expect(ex.error).toMatch(reason);
      // One plain sentence: no mrkdwn, no second sentence.
      expect(ex.error).not.toMatch(/[`<>*]|\.\s+\S/);
      expect(ex.completions).toEqual([
        { method: "functions.completeError", ok: true, token: "function" },
      ]);
      expect((await h.app.store.events.list(TEAM)).length).toBe(before);
      expect(
        h.sandbox.control.log().filter((e) => e.method === "POST" && /\/events$/.test(e.path)),
      ).toEqual([]);
    } finally {
      await h.app.store.settings.put(TEAM, s);
    }
  });

  it("retries a completion Slack fails, without scheduling twice", async () => {
    h.emulator.throttle({
      method: "functions.completeSuccess",
      times: 2,
      retryAfterSec: 0,
      error: "internal_error",
    });
    const before = (await h.app.store.events.list(TEAM)).length;
    const since = h.emulator.calls.length;
    const ex = await runStep(STEPS.schedule, scheduleInputs("Retried", future(3)));
    await scheduled(ex);
    const tries = h.emulator.calls
      .slice(since)
      .filter((c) => c.method === "functions.completeSuccess");
    expect(tries.map((c) => c.error ?? "ok")).toEqual(["internal_error", "internal_error", "ok"]);
    expect((await h.app.store.events.list(TEAM)).length).toBe(before + 1);
  });

  it("does the work once when the same execution comes again", async () => {
    const first = await runStep(STEPS.schedule, scheduleInputs("Once only", future(4)));
    const { out } = await scheduled(first);
    const before = (await h.app.store.events.list(TEAM)).length;
    // The same execution in a new delivery (a new event id, so only the step's claim stops it).
    const again = await h.driver.event({
      type: "function_executed",
      function: { callback_id: STEPS.schedule },
      inputs: first.inputs,
      function_execution_id: first.id,
      workflow_execution_id: first.workflowExecutionId,
      bot_access_token: first.token,
    });
    expect(again.status).toBe(200);
    await new Promise((r) => setTimeout(r, 1_000));
    expect((await h.app.store.events.list(TEAM)).length).toBe(before);
    expect(first.outputs).toEqual(out);
    expect(first.completions.filter((c) => c.ok)).toHaveLength(1);
  });
});

describe("a run a stopped process left mid-work", () => {
  it("is failed by the sweep after a while, saying so, with the bot token", async () => {
    // A workflow reached the step while the app was away (delivered nowhere), and the store holds
    // a claim of a process that stopped mid-work a quarter of an hour ago.
    h.emulator.setAppUrl("http://127.0.0.1:1");
    let ex: FunctionExecution;
    try {
      ex = (
        await h.emulator.driver.functionExecuted({
          callback_id: STEPS.schedule,
          inputs: scheduleInputs("Left mid-work", future(2)),
        })
      ).execution;
    } finally {
      h.emulator.driver.cancelRedeliveries();
      h.emulator.setAppUrl(h.app.origin);
    }
    const key = `fn-step:${TEAM}:${ex.id}`;
    await h.app.store.set(
      key,
      {
        team: TEAM,
        executionId: ex.id,
        step: STEPS.schedule,
        state: "working",
        at: Date.now() - 16 * 60_000,
      },
      STEP_MEMORY_MS,
    );
    await sweepSteps(h.app.deps);
    expect(ex.state).toBe("failed");
    expect(ex.error).toMatch(/^On Air stopped while running this step/);
    expect(ex.completions).toEqual([{ method: "functions.completeError", ok: true, token: "bot" }]);
    expect(await h.app.store.get(key)).toMatchObject({ state: "done" });
  });
});

describe("get_event_attendance", () => {
  it("gives the live run's counts exactly, and no names", async () => {
    const ex = await runStep(
      STEPS.schedule,
      scheduleInputs("Attendance run", future(1), { channel: CHANNELS.townHall }),
    );
    const { out } = await scheduled(ex);
    const control = h.sandbox.control;
    await control.setState(out.event_id, { state: "IN_EVENT" });
    const joined = await control.attendees(out.event_id, {
      join: [
        { name: "Ana One", email: "ana@example.com" },
        { name: "Ben Two", email: "ben@example.com" },
        { name: "Cy Three", email: "cy@example.com" },
      ],
      concurrency: 1,
    });
    await control.attendees(out.event_id, {
      leave: [joined.joined[0]!.endpointGuid],
      concurrency: 1,
    });
    await eventually(async () => {
      const f = await h.app.deps.live.figures(TEAM, out.event_id);
      return f?.present === 2 && f.unique === 3 ? true : undefined;
    }, "the figures");
    const read = await runStep(STEPS.attendance, { event_id: out.event_id });
    expect(read.state).toBe("completed");
    expect(read.outputs).toEqual({ peak: 3, unique: 3, present_at_end: 2, state: "IN_EVENT" });
    expect(JSON.stringify(read.outputs)).not.toMatch(/Ana|ana@/);
  });

  it("fails for an event On Air does not know, naming the input", async () => {
    const read = await runStep(STEPS.attendance, { event_id: "no-such-event" });
    expect(read.state).toBe("failed");
    expect(read.error).toMatch(/^The event_id input names no event/);
  });
});
