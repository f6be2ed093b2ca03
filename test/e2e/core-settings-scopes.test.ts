import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SETTINGS_ACTIONS, SETTINGS_VIEW } from "../../src/ids.ts";
import { botScopes } from "../../src/slack/scopes.ts";
import { CHANNELS, type Harness, startHarness, USERS } from "../helpers/app-harness.ts";

/**
 * A workspace that installed the app before it asked for the history scopes: the settings Check
 * names what is missing and how to grant it, instead of the app quietly doing less.
 */

const OLD_INSTALL = botScopes().filter((s) => s !== "channels:history" && s !== "groups:history");

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ botScopes: OLD_INSTALL });
});
afterAll(async () => {
  await h?.close();
});

describe("settings Check on an install with fewer scopes", () => {
  it("names the missing permissions and the way to reinstall", async () => {
    let since = h.emulator.calls.length;
    await h.driver.slashCommand({ user: USERS.admin, channel: CHANNELS.general, text: "settings" });
    await h.emulator.waitForCall(
      (c) =>
        c.method === "views.update" &&
        (c.args.view as { callback_id?: string } | undefined)?.callback_id === SETTINGS_VIEW,
      { since, timeoutMs: 5_000 },
    );
    since = h.emulator.calls.length;
    await h.driver.blockAction({ user: USERS.admin, action_id: SETTINGS_ACTIONS.check });
    const done = await h.emulator.waitForCall(
      (c) => c.method === "views.update" && JSON.stringify(c.args.view).includes("Slack:"),
      { since, timeoutMs: 5_000 },
    );
    const text = JSON.stringify(done.args.view);
    expect(text).toContain(":x: *Slack:*");
    expect(text).toContain("has not granted channels:history, groups:history");
    expect(text).toContain(`${h.app.origin}/slack/install`);
    // The other checks are unaffected.
    expect(text).toContain(":white_check_mark: *Relay:*");
  });
});
