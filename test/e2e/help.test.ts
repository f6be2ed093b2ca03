import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHANNELS, type Harness, startHarness, USERS } from "../helpers/app-harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

describe("/onair help", () => {
  it("acks at once and answers ephemerally with every subcommand", async () => {
    const since = h.emulator.calls.length;
    const res = await h.driver.slashCommand({
      user: USERS.member,
      channel: CHANNELS.general,
      text: "help",
    });
    expect(res.status).toBe(200);
    const call = await h.emulator.waitForCall((c) => c.method === "response_url", {
      since,
      timeoutMs: 5_000,
    });
    const text = String(call.args.text);
    expect(call.args.response_type).toBe("ephemeral");
    for (const sub of ["schedule", "edit", "cancel", "notify", "token", "settings", "whoami"]) {
      expect(text).toContain(`/onair ${sub}`);
    }
  });

  it("answers an unknown subcommand with help, naming what it did not know", async () => {
    const since = h.emulator.calls.length;
    await h.driver.slashCommand({
      user: USERS.member,
      channel: CHANNELS.general,
      text: "dance now",
    });
    const call = await h.emulator.waitForCall((c) => c.method === "response_url", {
      since,
      timeoutMs: 5_000,
    });
    expect(String(call.args.text)).toContain("I don't know `/onair dance`");
  });

  it("refuses unsigned and forged requests with 401 and runs nothing", async () => {
    for (const forge of [
      "bad-signature",
      "stale-timestamp",
      "future-timestamp",
      "tampered-body",
      "no-signature",
    ] as const) {
      const since = h.emulator.calls.length;
      const res = await h.driver.slashCommand({
        user: USERS.member,
        channel: CHANNELS.general,
        text: "help",
        forge,
      });
      expect(res.status, forge).toBe(401);
      await new Promise((r) => setTimeout(r, 50));
      expect(h.emulator.calls.slice(since).filter((c) => c.method === "response_url")).toEqual([]);
    }
  });
});
