import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VIEWS } from "../../src/ids.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";

/**
 * Slack's per-method limits met head on: a storm of 429s on a tier-2 lookup (App Home's user
 * group checks) does not hold back the interactive calls a person is waiting for.
 */

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  const s = await h.app.store.settings.getOrDefault(TEAM);
  // A user-group policy: every App Home open and every schedule asks for the group's members.
  await h.app.store.settings.put(TEAM, {
    ...s,
    policy: { whoMaySchedule: { usergroup: "S0ORGANIZERS" }, whoMayMint: "admins" },
  });
});
afterAll(async () => {
  await h?.close();
});

describe("a tier-2 429 storm on App Home", () => {
  it("does not stop a views.open meeting its trigger", async () => {
    // usergroups.users.list answers 429 with a long Retry-After, again and again.
    h.emulator.throttle({ method: "usergroups.users.list", times: 1_000, retryAfterSec: 30 });
    const since = h.emulator.calls.length;
    for (let i = 0; i < 3; i++) {
      await h.driver.event({ type: "app_home_opened", user: USERS.omar, tab: "home" });
    }
    await h.emulator.waitForCall((c) => c.method === "usergroups.users.list" && c.status === 429, {
      since,
    });
    const sent = Date.now();
    await h.driver.slashCommand({ user: USERS.omar, channel: CHANNELS.general, text: "schedule" });
    const open = await h.emulator.waitForCall((c) => c.method === "views.open", { since });
    expect(open.ok).toBe(true);
    // Well inside the trigger's 3 s, though the lookups were told to wait 30 s.
    expect(open.time - sent).toBeLessThan(3_000);
    // The form then says, in plain words, why it cannot go on just now.
    const filled = await h.emulator.waitForCall(
      (c) =>
        c.method === "views.update" &&
        (c.args.view as { callback_id?: string }).callback_id !== VIEWS.event,
      { since },
    );
    expect(JSON.stringify((filled.args.view as { blocks: unknown }).blocks)).toMatch(
      /Slack is asking On Air to slow down/,
    );
    h.emulator.clearThrottles();
  });
});

describe("a user group Slack cannot read (its plan has none, or it was deleted)", () => {
  it("admins still schedule; others are told who may, in plain words", async () => {
    // Documented answers of usergroups.users.list; before, the first locked admins out too.
    h.emulator.throttle({
      method: "usergroups.users.list",
      times: 1_000,
      retryAfterSec: 0,
      error: "plan_upgrade_required",
    });
    const formFor = async (user: string) => {
      const since = h.emulator.calls.length;
      await h.driver.slashCommand({ user, channel: CHANNELS.general, text: "schedule" });
      await h.emulator.waitForCall((c) => c.method === "views.open", { since });
      const filled = await h.emulator.waitForCall((c) => c.method === "views.update", { since });
      return filled.args.view as { callback_id?: string; blocks: unknown };
    };
    const admin = await formFor(USERS.admin);
    expect(admin.callback_id).toBe(VIEWS.event);
    await h.driver.viewClosed({ user: USERS.admin });
    const member = await formFor(USERS.member);
    expect(member.callback_id).not.toBe(VIEWS.event);
    expect(JSON.stringify(member.blocks)).toContain("members of <!subteam^S0ORGANIZERS>");
    await h.driver.viewClosed({ user: USERS.member });
    h.emulator.clearThrottles();
  });
});
