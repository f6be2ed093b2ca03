import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { seedEvent } from "../helpers/live-fixtures.ts";
import { startTestPlayground } from "../helpers/playground.ts";
import { waitFor } from "./organizer-helpers.ts";

/**
 * What an operator reads: a user's mistake or a refusal is an ordinary line (info or warn, no
 * stack); error level and stacks are for the app's own faults. Read from the real app's log
 * stream while the emulator's driver plays Slack.
 */

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

interface Line {
  level: string;
  msg?: string;
  err?: { stack?: string };
  [k: string]: unknown;
}

function lines(from: number, logs: readonly string[] = h.logs): Line[] {
  return logs
    .slice(from)
    .join("")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Line);
}

async function answer(user: string, text: string): Promise<string> {
  const since = h.emulator.calls.length;
  await h.driver.slashCommand({ user, channel: CHANNELS.general, text });
  const call = await waitFor(
    h,
    (c) =>
      (c.method === "response_url" || c.method === "chat.postEphemeral") &&
      String(c.args.text ?? "").length > 0,
    since,
  );
  return String(call.args.text);
}

describe("user mistakes in the log", () => {
  it("are logged without a stack and nothing reaches error level", async () => {
    const from = h.logs.length;
    const said = [
      await answer(USERS.omar, "edit 999999999"),
      await answer(USERS.omar, "cancel no-such-event"),
      await answer(USERS.member, "settings"),
      await answer(USERS.omar, "attendance 123456789"),
      await answer(USERS.omar, "frobnicate"),
    ];
    // Each was answered in words a person can act on, not the generic failure.
    for (const text of said) expect(text).not.toMatch(/Something went wrong on our side/);

    const logged = lines(from);
    const refusals = logged.filter((l) => l.msg === "refused");
    expect(refusals.length).toBeGreaterThanOrEqual(3);
    for (const l of refusals) expect(["info", "warn"]).toContain(l.level);
    expect(logged.filter((l) => l.level === "error" || l.level === "fatal")).toEqual([]);
    expect(logged.filter((l) => JSON.stringify(l).includes('"stack"'))).toEqual([]);
  });

  it("a fault of the app's own is logged at error with its stack", async () => {
    const from = h.logs.length;
    const original = h.app.store.settings.getOrDefault.bind(h.app.store.settings);
    h.app.store.settings.getOrDefault = async () => {
      throw new Error("disk on fire");
    };
    try {
      const text = await answer(USERS.omar, "list");
      expect(text).toMatch(/Something went wrong on our side|could not/i);
    } finally {
      h.app.store.settings.getOrDefault = original;
    }
    const errors = lines(from).filter((l) => l.level === "error");
    expect(errors.length).toBeGreaterThanOrEqual(1);
    expect(errors.some((l) => String(l.err?.stack).includes("disk on fire"))).toBe(true);
  });
});

describe("ordinary conditions in the log", () => {
  it("a notify to a channel the bot is already in leaves no warning", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Already in",
    });
    const from = h.logs.length;
    const since = h.emulator.calls.length;
    await h.driver.slashCommand({
      user: USERS.omar,
      channel: CHANNELS.general,
      text: `notify ${event.eventId} <#${CHANNELS.general}|general>`,
      escaped: true,
    });
    await waitFor(
      h,
      (c) => c.method === "response_url" && String(c.args.text).includes("now go to"),
      since,
    );
    // Slack's answer said so: the bot was in the channel already (nothing to tell an operator).
    await waitFor(
      h,
      (c) => c.method === "conversations.join" && c.response?.warning === "already_in_channel",
      since,
    );
    const logged = lines(from);
    expect(logged.filter((l) => l.level === "warn" || l.level === "error")).toEqual([]);
  });

  it("the events service answering 503 is a warning without a stack, not the app's fault", async () => {
    h.sandbox.control.addFault({ service: "events", status: 503, times: 50 });
    const from = h.logs.length;
    try {
      const text = await answer(USERS.kei, "list");
      expect(text).not.toBe("");
      // Opening a form that needs the service first: the form says why, the log warns.
      const since = h.emulator.calls.length;
      await h.driver.slashCommand({ user: USERS.kei, channel: CHANNELS.general, text: "schedule" });
      await waitFor(h, (c) => c.method === "views.update" && c.ok, since);
    } finally {
      h.sandbox.control.clearFaults();
    }
    const logged = lines(from);
    const about = logged.filter((l) => JSON.stringify(l).includes("503"));
    expect(about.length).toBeGreaterThanOrEqual(1);
    expect(logged.filter((l) => l.level === "error" || l.level === "fatal")).toEqual([]);
    expect(logged.filter((l) => JSON.stringify(l).includes('"stack"'))).toEqual([]);
  });
});

describe("a playground start", () => {
  it("with events of three organizers kept from before logs no warning", async () => {
    const dir = mkdtempSync(join(tmpdir(), "onair-oplogs-pg-"));
    const logs: string[] = [];
    try {
      let pg = await startTestPlayground(dir, logs);
      for (const organizer of [USERS.omar, USERS.kei, USERS.admin]) {
        await seedEvent(pg.app.deps, { team: TEAM, organizer, title: `Kept ${organizer}` });
      }
      await pg.close();
      const from = logs.length;
      // The sandbox keeps no token across the restart: the cached ones are refused (401) and
      // fetched anew as the start's reconcile reads each event.
      pg = await startTestPlayground(dir, logs);
      try {
        await expect
          .poll(
            () =>
              logs
                .slice(from)
                .join("")
                .match(/"status":401/g)?.length ?? 0,
            { timeout: 10_000 },
          )
          .toBeGreaterThanOrEqual(3);
      } finally {
        await pg.close();
      }
      const logged = lines(from, logs);
      expect(logged.filter((l) => ["warn", "error", "fatal"].includes(l.level))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("stopped while the start's reconcile waits on the sandbox, it lets that call finish and logs no warning", async () => {
    const dir = mkdtempSync(join(tmpdir(), "onair-oplogs-stop-"));
    const logs: string[] = [];
    try {
      let pg = await startTestPlayground(dir, logs);
      for (const organizer of [USERS.omar, USERS.kei]) {
        await seedEvent(pg.app.deps, { team: TEAM, organizer, title: `Kept ${organizer}` });
      }
      await pg.close();
      // One event a second, so the walk is still going when the stop comes.
      pg = await startTestPlayground(dir, logs, 0, { reconcile: { concurrency: 1, perSecond: 1 } });
      const from = logs.length;
      const sandbox = pg.app.sandbox!;
      // The events service answers slowly from here: the stop lands while a call is in flight
      // (the embedded sandbox is served on the app's own port).
      sandbox.control.addFault({ service: "events", delayMs: 400, times: 20 });
      await expect.poll(() => sandbox.control.faults()[0]?.remaining ?? 0).toBeLessThan(20);
      await pg.close();
      const logged = lines(from, logs);
      expect(logged.filter((l) => ["warn", "error", "fatal"].includes(l.level))).toEqual([]);
      // The call in flight was answered, not cut off by the port closing under it.
      expect(logged.some((l) => l.msg === "upstream call failed without a response")).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
