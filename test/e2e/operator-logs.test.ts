import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHANNELS, type Harness, startHarness, USERS } from "../helpers/app-harness.ts";
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

function lines(from: number): Line[] {
  return h.logs
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
