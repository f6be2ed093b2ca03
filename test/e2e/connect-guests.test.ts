import { DEFAULT_USERS } from "@onair/slack-emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  EVENT_FIELDS,
  GUESTS_MAY,
  HOME_ACTIONS,
  SETTINGS_FIELDS,
  SETTINGS_VIEW,
  VIEWS,
} from "../../src/ids.ts";
import { FOREIGN_WORKSPACE_TEXT } from "../../src/slack/bolt-app.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { future, HOUR, isMessageTo, viewOf, waitFor } from "./organizer-helpers.ts";

/**
 * Slack Connect and guests. A person of another organization in a shared channel is never an
 * admin here, whatever their own workspace made them, and acts under their own workspace (here
 * it has no On Air, so they are told so plainly). Guests may not schedule, mint or change
 * settings unless the settings say so: a policy choice, off by default.
 */

const PARTNER = "T0PARTNER";
const FOREIGN_ADMIN = "U0FOREIGN0ADM";
const GUEST = "U0GUEST0MCG";

const seedUsers = () => ({
  users: [
    ...DEFAULT_USERS,
    {
      id: FOREIGN_ADMIN,
      name: "pat",
      real_name: "Pat Partner",
      tz: "Europe/Madrid",
      email: "pat@example.com",
      team_id: PARTNER,
      is_admin: true,
      is_owner: true,
    },
    {
      id: GUEST,
      name: "gus",
      real_name: "Gus Guest",
      tz: "Europe/Oslo",
      email: "gus@example.com",
      is_restricted: true,
    },
  ],
});

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ seed: seedUsers() });
});
afterAll(async () => {
  await h?.close();
});

/** The user is told, in a message to them or in the modal the command opened. */
async function told(user: string, re: RegExp, since: number) {
  const isMessage = isMessageTo(user, re);
  await waitFor(
    h,
    (c) => isMessage(c) || (c.method === "views.update" && re.test(JSON.stringify(viewOf(c)))),
    since,
  );
  if (h.emulator.workspace.topView(user)) await h.driver.viewClosed({ user });
}

async function command(user: string, text: string) {
  const since = h.emulator.calls.length;
  const res = await h.driver.slashCommand({ user, channel: CHANNELS.general, text });
  expect(res.status).toBe(200);
  return since;
}

describe("a person from another organization (Slack Connect)", () => {
  it("is no admin here, though an owner in their own workspace: settings are refused", async () => {
    const since = await command(FOREIGN_ADMIN, "settings");
    await told(FOREIGN_ADMIN, /Only workspace admins and owners/, since);
    expect(
      h.emulator.calls
        .slice(since)
        .some((c) => c.method === "views.update" && viewOf(c).callback_id === SETTINGS_VIEW),
    ).toBe(false);
  });

  it("acts under their own workspace: a button pressed here tells them to use their own", async () => {
    await h.driver.event({ type: "app_home_opened", user: FOREIGN_ADMIN }, { team: TEAM });
    await expect.poll(() => h.emulator.workspace.homeView(FOREIGN_ADMIN)).toBeDefined();
    const since = h.emulator.calls.length;
    const res = await h.driver.blockAction({
      user: FOREIGN_ADMIN,
      action_id: HOME_ACTIONS.schedule,
    });
    expect(res.status).toBe(200);
    expect((res.payload as { user: { team_id: string } }).user.team_id).toBe(PARTNER);
    const told = await waitFor(h, (c) => c.method === "views.open", since);
    expect(JSON.stringify(viewOf(told))).toContain("shared with another organization");
    expect(FOREIGN_WORKSPACE_TEXT).toContain("your own workspace");
    // Nothing was scheduled or opened for this workspace on their behalf.
    expect(
      h.emulator.calls
        .slice(since)
        .some((c) => c.method.startsWith("views.") && viewOf(c).callback_id === VIEWS.event),
    ).toBe(false);
    expect(await h.app.store.keys(`user:${PARTNER}`)).toEqual([]);
  });
});

describe("guests", () => {
  it("may not schedule, mint or change settings while the policy says nothing of them", async () => {
    let since = await command(GUEST, "schedule");
    await told(GUEST, /Guests can't schedule events/, since);
    since = await command(GUEST, "token");
    await told(GUEST, /Guests can't mint relay tokens/, since);
    since = await command(GUEST, "settings");
    await told(GUEST, /Only workspace admins and owners/, since);
  });

  it("an admin's settings can let them in (the new policy choice, off by default)", async () => {
    expect((await h.app.store.settings.getOrDefault(TEAM)).policy.guestsMay).toBeUndefined();
    const since = await command(USERS.admin, "settings");
    const form = await waitFor(
      h,
      (c) => c.method === "views.update" && viewOf(c).callback_id === SETTINGS_VIEW,
      since,
    );
    const guests = (viewOf(form).blocks as Array<{ block_id?: string; element?: unknown }>).find(
      (b) => b.block_id === SETTINGS_FIELDS.guests,
    );
    expect(JSON.stringify(guests?.element)).not.toContain("initial_options");
    const res = await h.driver.viewSubmission({
      user: USERS.admin,
      values: { [SETTINGS_FIELDS.guests]: [GUESTS_MAY] },
    });
    expect(res.outcome.action).toBe("closed");
    await expect
      .poll(async () => (await h.app.store.settings.get(TEAM))?.policy.guestsMay)
      .toBe(true);

    const since2 = await command(GUEST, "schedule");
    const opened = await waitFor(
      h,
      (c) => c.method === "views.update" && viewOf(c).callback_id === VIEWS.event,
      since2,
    );
    expect(opened.ok).toBe(true);
    await h.driver.viewClosed({ user: GUEST });
    // Minting still follows its audience (admins by default): a guest is no admin.
    const since3 = await command(GUEST, "token");
    await told(GUEST, /only workspace admins may mint relay tokens/, since3);
  });
});

describe("a person from another organization whose workspace has On Air too", () => {
  let o: Harness;
  beforeAll(async () => {
    o = await startHarness({ oauth: true, seed: seedUsers() });
    expect((await o.driver.oauthInstall()).callback.status).toBe(200);
    // Their own workspace installed On Air as well (its installation, as the store keeps it).
    const ours = await o.app.store.installations.get(TEAM);
    if (!ours?.team) throw new Error("no installation");
    await o.app.store.installations.put(PARTNER, {
      ...ours,
      team: { id: PARTNER, name: "Partner" },
    });
  });
  afterAll(async () => {
    await o?.close();
  });

  it("schedules under their own workspace's records, not the channel's workspace", async () => {
    await o.driver.event({ type: "app_home_opened", user: FOREIGN_ADMIN }, { team: TEAM });
    await expect.poll(() => o.emulator.workspace.homeView(FOREIGN_ADMIN)).toBeDefined();
    const since = o.emulator.calls.length;
    await o.driver.blockAction({ user: FOREIGN_ADMIN, action_id: HOME_ACTIONS.schedule });
    await waitFor(
      o,
      (c) => c.method === "views.update" && viewOf(c).callback_id === VIEWS.event,
      since,
    );
    const start = future(5);
    const res = await o.driver.viewSubmission({
      user: FOREIGN_ADMIN,
      values: {
        [EVENT_FIELDS.title]: "Partner webinar",
        [EVENT_FIELDS.start]: new Date(start),
        [EVENT_FIELDS.end]: new Date(start + HOUR),
      },
    });
    expect(res.outcome.action).toBe("closed");
    expect((res.payload as { team: { id: string } }).team.id).toBe(TEAM);
    await expect
      .poll(async () => (await o.app.store.events.list(PARTNER)).map((e) => e.title))
      .toEqual(["Partner webinar"]);
    expect(await o.app.store.events.list(TEAM)).toEqual([]);
    // And their own workspace's admin rights do not reach this one's settings.
    const since2 = await (async () => {
      const n = o.emulator.calls.length;
      await o.driver.slashCommand({
        user: FOREIGN_ADMIN,
        channel: CHANNELS.general,
        text: "settings",
      });
      return n;
    })();
    const isMessage = isMessageTo(FOREIGN_ADMIN, /Only workspace admins and owners/);
    await waitFor(
      o,
      (c) =>
        isMessage(c) ||
        (c.method === "views.update" && /Only workspace admins/.test(JSON.stringify(viewOf(c)))),
      since2,
    );
  });
});
