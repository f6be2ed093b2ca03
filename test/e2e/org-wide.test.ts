import { DEFAULT_USERS } from "@onair/slack-emulator";
import { WebClient } from "@slack/web-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENT_FIELDS, VIEWS } from "../../src/ids.ts";
import { tellAdminsRotationRefused } from "../../src/slack/home.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { createSecretScanner } from "../helpers/secrets.ts";
import {
  commandOpensModal,
  future,
  HOUR,
  isMessageTo,
  viewOf,
  waitFor,
} from "./organizer-helpers.ts";

/**
 * An org-wide install (Enterprise Grid) with two workspaces, with payloads shaped as Slack sends
 * them for it: `team: null`, `enterprise`, `is_enterprise_install: true`, the person's workspace
 * in `user.team_id` (commands: `team_id`; events: `context_team_id`), and
 * `view.app_installed_team_id` = the enterprise id. Every record of a workspace lives under its
 * team id; only the installation lives under the enterprise id. The schedule submission,
 * `/onair list`, App Home and uninstall agree on that.
 */

const ORG = "E0ORGWIDE";
const SECOND = "T0SECOND";
const SAM = "U0SAM0SECOND";
const SECOND_ADMIN = "U0SIA0SECOND";
const PARTNER_ADMIN = "U0PAT0PARTNER";
const F = EVENT_FIELDS;

let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    oauth: true,
    seed: {
      enterprise: {
        id: ORG,
        name: "Org Wide Inc",
        teams: [{ id: SECOND, name: "Second", domain: "second" }],
      },
      orgInstall: true,
      users: [
        ...DEFAULT_USERS,
        {
          id: SAM,
          name: "sam",
          real_name: "Sam Second",
          tz: "Europe/London",
          email: "sam@example.com",
          team_id: SECOND,
        },
        {
          id: SECOND_ADMIN,
          name: "sia",
          real_name: "Sia Second Admin",
          tz: "UTC",
          email: "sia@example.com",
          team_id: SECOND,
          is_admin: true,
        },
        {
          id: PARTNER_ADMIN,
          name: "pat",
          real_name: "Pat Partner",
          tz: "UTC",
          email: "pat@example.com",
          team_id: "T0PARTNER",
          is_admin: true,
        },
      ],
    },
  });
});
afterAll(async () => {
  await h?.close();
});

async function schedule(user: string, title: string) {
  await commandOpensModal(h, user, CHANNELS.general, "schedule", VIEWS.event);
  const start = future(4);
  const res = await h.driver.viewSubmission({
    user,
    values: { [F.title]: title, [F.start]: new Date(start), [F.end]: new Date(start + HOUR) },
  });
  expect(res.outcome.action).toBe("closed");
  // The submission arrived as Slack sends it for an org-wide install.
  const p = res.payload as {
    team: unknown;
    enterprise: { id: string };
    is_enterprise_install: boolean;
    user: { team_id: string };
    view: { app_installed_team_id: string };
  };
  expect(p.team).toBeNull();
  expect(p.enterprise.id).toBe(ORG);
  expect(p.is_enterprise_install).toBe(true);
  expect(p.view.app_installed_team_id).toBe(ORG);
  return p.user.team_id;
}

const keysUnder = async (team: string) =>
  (await h.app.store.keys("")).filter((k) => k.split(":")[1] === team);

describe("an org-wide install with two workspaces", () => {
  it("installs once for the org: the installation lives under the enterprise id", async () => {
    const r = await h.driver.oauthInstall();
    expect(r.callback.status).toBe(200);
    const inst = await h.app.store.installations.get(ORG);
    expect(inst?.isEnterpriseInstall).toBe(true);
    expect(inst?.enterprise?.id).toBe(ORG);
    expect(await h.app.store.installations.get(TEAM)).toBeUndefined();
  });

  it("keeps each person's event under their own workspace, never the enterprise", async () => {
    expect(await schedule(USERS.omar, "First workspace all-hands")).toBe(TEAM);
    expect(await schedule(SAM, "Second workspace town hall")).toBe(SECOND);
    // The event is stored once the events service has it, just after the modal closes.
    const titles = async (team: string) =>
      (await h.app.store.events.list(team)).map((e) => e.title);
    await expect.poll(() => titles(TEAM)).toEqual(["First workspace all-hands"]);
    await expect.poll(() => titles(SECOND)).toEqual(["Second workspace town hall"]);
    expect(await h.app.store.users.get(TEAM, USERS.omar)).toBeDefined();
    expect(await h.app.store.users.get(SECOND, SAM)).toBeDefined();
    // Nothing but the installation is under the enterprise id (event:, user:, token:, audit:).
    expect(await keysUnder(ORG)).toEqual([`install:${ORG}`]);
  });

  it("/onair list shows the same person what the submission stored", async () => {
    const since = h.emulator.calls.length;
    await h.driver.slashCommand({ user: USERS.omar, channel: CHANNELS.general, text: "list" });
    const mine = await waitFor(h, isMessageTo(USERS.omar, /First workspace all-hands/), since);
    expect(JSON.stringify(mine.args)).not.toContain("Second workspace town hall");
    const since2 = h.emulator.calls.length;
    await h.driver.slashCommand({ user: SAM, channel: CHANNELS.general, text: "list" });
    const sams = await waitFor(h, isMessageTo(SAM, /Second workspace town hall/), since2);
    expect(JSON.stringify(sams.args)).not.toContain("First workspace all-hands");
  });

  it("App Home lists the person's events from their workspace", async () => {
    const since = h.emulator.calls.length;
    const r = await h.driver.event({ type: "app_home_opened", user: SAM });
    expect((r.payload as { context_team_id?: string }).context_team_id).toBe(SECOND);
    const home = await waitFor(
      h,
      (c) => c.method === "views.publish" && c.args.user_id === SAM,
      since,
    );
    expect(JSON.stringify(viewOf(home).blocks)).toContain("Second workspace town hall");
  });

  it("posts for a workspace with the org's installation (the live engine's client)", async () => {
    const bulk = await h.app.deps.bulkClient(SECOND);
    const posted = await bulk.chat.postMessage({ channel: CHANNELS.events, text: "org post" });
    expect(posted.ok).toBe(true);
  });

  it("a person of another organization in a shared channel is sent to their own workspace", async () => {
    const res = await h.driver.slashCommand({
      user: PARTNER_ADMIN,
      channel: CHANNELS.general,
      text: "settings",
    });
    expect((res.payload as { team_id: string }).team_id).toBe("T0PARTNER");
    expect(JSON.stringify(res.body)).toContain("shared with another organization");
    expect(await h.app.store.keys("orgteam:T0PARTNER")).toEqual([]);
    expect(await h.app.store.settings.get("T0PARTNER")).toBeUndefined();
    // The org's own workspaces were recognised and remembered.
    expect((await h.app.store.keys("orgteam:")).sort()).toEqual(
      [`orgteam:${SECOND}`, `orgteam:${TEAM}`].sort(),
    );
  });

  it("a refused refresh is told to the admins of each of the org's workspaces, no one else", async () => {
    const client = new WebClient(h.emulator.botToken, { slackApiUrl: h.emulator.apiUrl });
    const since = h.emulator.calls.length;
    await tellAdminsRotationRefused(client, ORG, [TEAM, SECOND], h.app.logger);
    const dms = h.emulator.calls
      .slice(since)
      .filter((c) => c.method === "chat.postMessage" && c.ok)
      .map((c) => c.args.channel);
    expect(dms.sort()).toEqual([USERS.admin, SECOND_ADMIN].sort());
    const lists = h.emulator.calls.slice(since).filter((c) => c.method === "users.list");
    expect(lists.map((c) => c.args.team_id).sort()).toEqual([TEAM, SECOND].sort());
  });

  it("a workspace removing the app loses its data; the org's installation stays", async () => {
    await h.driver.uninstall({ team: SECOND });
    await expect.poll(() => keysUnder(SECOND)).toEqual([]);
    expect(await h.app.store.installations.get(ORG)).toBeDefined();
    expect((await h.app.store.events.list(TEAM)).length).toBe(1);
  });

  it("the org uninstalling removes the org's installation and what it alone made", async () => {
    const results = await h.driver.uninstall();
    for (const r of results) {
      const p = r.payload as { team_id: string; authorizations: Array<{ team_id: unknown }> };
      expect(p.team_id).toBe(ORG);
      expect(p.authorizations[0]?.team_id).toBeNull();
    }
    await expect.poll(() => keysUnder(ORG)).toEqual([]);
    await expect.poll(() => h.app.store.keys("orgteam:")).toEqual([]);
    expect(h.logs.join("")).not.toContain("nothing deleted");
    // The first workspace's own records are its own: they go when it uninstalls.
    expect((await h.app.store.events.list(TEAM)).length).toBe(1);
  });

  it("leaks no token or secret into logs or Slack messages", () => {
    const scan = createSecretScanner();
    for (const line of h.logs) scan.add("log", line);
    scan.assertNoSecrets(h.secrets);
  });
});
