import type { CallRecord } from "@onair/slack-emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  SETTINGS_ACTIONS,
  SETTINGS_BLOCKS,
  SETTINGS_FIELDS,
  SETTINGS_VIEW,
} from "../../src/ids.ts";
import { enterpriseTokenKey, userTokenKey } from "../../src/upstream/events/tokens.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { createSecretScanner } from "../helpers/secrets.ts";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const NEW_SECRET = "events-secret-9f8e7d6c5b4a";
const NEW_PASSWORD = "relay-password-1a2b3c4d5e";

async function openSettings(user: string): Promise<CallRecord> {
  const since = h.emulator.calls.length;
  const res = await h.driver.slashCommand({ user, channel: CHANNELS.general, text: "settings" });
  expect(res.status).toBe(200);
  // An admin's modal opens at once with a placeholder, which the form then replaces.
  return h.emulator.waitForCall(
    (c) =>
      (c.method === "views.update" &&
        (c.args.view as { callback_id?: string } | undefined)?.callback_id === SETTINGS_VIEW) ||
      c.method === "response_url",
    { since, timeoutMs: 5_000 },
  );
}

function topModal(user: string) {
  const rec = h.emulator.workspace.topView(user);
  if (!rec) throw new Error(`${user} has no modal open`);
  return rec;
}

function element(blocks: readonly unknown[], blockId: string): Record<string, unknown> {
  const b = blocks.find(
    (x) => typeof x === "object" && x !== null && (x as { block_id?: string }).block_id === blockId,
  ) as { element?: Record<string, unknown> } | undefined;
  if (!b?.element) throw new Error(`no input ${blockId}`);
  return b.element;
}

/** Types into a field of the user's open modal, as a person would before pressing a button. */
function type(user: string, field: string, value: string) {
  const rec = topModal(user);
  rec.view.state.values[field] = {
    [field]: { type: "plain_text_input", value },
  };
}

function viewText(call: CallRecord): string {
  return JSON.stringify(call.args.view);
}

describe("/onair settings", () => {
  it("refuses a member politely and opens nothing", async () => {
    const call = await openSettings(USERS.member);
    expect(call.method).toBe("response_url");
    expect(call.args.response_type).toBe("ephemeral");
    expect(String(call.args.text)).toMatch(/^Only workspace admins and owners can change/);
    expect(h.emulator.workspace.topView(USERS.member)).toBeUndefined();
  });

  it("opens for an admin with the sandbox credentials filled in and no secret shown", async () => {
    const call = await openSettings(USERS.admin);
    expect(call.method).toBe("views.update");
    expect(call.ok).toBe(true);
    const view = topModal(USERS.admin).view;
    expect(view.callback_id).toBe(SETTINGS_VIEW);
    expect(element(view.blocks, SETTINGS_FIELDS.eventsKey).initial_value).toBe("sandbox-key");
    expect(element(view.blocks, SETTINGS_FIELDS.relayUsername).initial_value).toBe("sandbox");
    const secretField = element(view.blocks, SETTINGS_FIELDS.eventsSecret);
    expect(secretField.initial_value).toBeUndefined();
    expect(JSON.stringify(secretField.placeholder)).toContain("set — leave empty to keep");
    expect(viewText(call)).not.toContain("sandbox-secret");
    // The groups come from usergroups.list.
    expect(viewText(call)).toContain("group:S0ORGANIZERS");
  });

  it("Check shows the enterprise label, point of contact and the enterprise grant", async () => {
    await openSettings(USERS.admin);
    h.sandbox.control.clearLog();
    const since = h.emulator.calls.length;
    await h.driver.blockAction({ user: USERS.admin, action_id: SETTINGS_ACTIONS.check });
    const done = await h.emulator.waitForCall(
      (c) => c.method === "views.update" && viewText(c).includes("Relay:"),
      { since, timeoutMs: 5_000 },
    );
    const text = viewText(done);
    expect(text).toContain("Sandbox Enterprise");
    expect(text).toContain("admin@example.com");
    expect(text).toContain("enterprise token granted (enterprise 1001)");
    expect(text).toContain(":white_check_mark: *Slack:* all");
    expect(text).toContain("permissions the app asks for are granted");
    const log = h.sandbox.control.log();
    const mint = log.find((e) => e.service === "relay" && e.path === "/api/auth/accesstokens");
    expect(mint?.query).toMatchObject({ duration: "60000", clientname: "On Air check" });
    expect(log.some((e) => e.service === "relay" && e.path === "/api/enterprises/self")).toBe(true);
    expect(log.some((e) => e.service === "events" && e.grantType === "enterprise_app")).toBe(true);
  });

  it("Check uses what the admin typed and says plainly when the relay refuses it", async () => {
    await openSettings(USERS.admin);
    type(USERS.admin, SETTINGS_FIELDS.relayPassword, "wrong-password-123");
    type(USERS.admin, SETTINGS_FIELDS.eventsSecret, "wrong-events-secret-456");
    const since = h.emulator.calls.length;
    await h.driver.blockAction({ user: USERS.admin, action_id: SETTINGS_ACTIONS.check });
    const done = await h.emulator.waitForCall(
      (c) => c.method === "views.update" && viewText(c).includes("Relay:"),
      { since, timeoutMs: 5_000 },
    );
    expect(viewText(done)).toContain(":x: *Relay:*");
    expect(viewText(done)).toContain(":x: *Events service:*");
    expect(viewText(done)).not.toContain("wrong-password-123");
    expect(viewText(done)).not.toContain("wrong-events-secret-456");
    // Checking saves nothing.
    expect(await h.app.store.settings.get(TEAM)).toBeUndefined();
    // What the admin typed survives the update.
    const state = topModal(USERS.admin).view.state.values[SETTINGS_FIELDS.relayPassword];
    expect(state?.[SETTINGS_FIELDS.relayPassword]?.value).toBe("wrong-password-123");
  });

  it("Save after a failing Check asks before storing those credentials", async () => {
    await openSettings(USERS.admin);
    type(USERS.admin, SETTINGS_FIELDS.relayPassword, "wrong-password-123");
    const since = h.emulator.calls.length;
    await h.driver.blockAction({ user: USERS.admin, action_id: SETTINGS_ACTIONS.check });
    const done = await h.emulator.waitForCall(
      (c) => c.method === "views.update" && viewText(c).includes(":x: *Relay:*"),
      { since, timeoutMs: 5_000 },
    );
    expect(viewText(done)).toContain("Check failed for the relay username and password");
    const before = await h.app.store.settings.get(TEAM);
    const res = await h.driver.viewSubmission({ user: USERS.admin });
    expect(res.outcome.action).toBe("errors");
    const errors = (res.body as { errors: Record<string, string> }).errors;
    expect(Object.keys(errors)).toEqual([SETTINGS_BLOCKS.saveAnyway]);
    expect(errors[SETTINGS_BLOCKS.saveAnyway]).toMatch(
      /Check just failed for the relay username and password you typed, so nothing was saved/,
    );
    expect(await h.app.store.settings.get(TEAM)).toEqual(before);
    // Ticked, the same values are saved: the admin's call.
    const saved = h.emulator.calls.length;
    const ok = await h.driver.viewSubmission({
      user: USERS.admin,
      values: { [SETTINGS_BLOCKS.saveAnyway]: ["save_anyway"] },
    });
    expect(ok.outcome.action).toBe("closed");
    await h.emulator.waitForCall((c) => /settings are saved/.test(String(c.args.text ?? "")), {
      since: saved,
      timeoutMs: 5_000,
    });
    expect((await h.app.store.settings.get(TEAM))?.relayPassword).toBe("wrong-password-123");
    // Put back what the other tests expect: nothing stored.
    await h.app.store.settings.delete(TEAM);
  });

  it("a failing Check of credentials left as stored asks nothing at Save", async () => {
    await openSettings(USERS.admin);
    h.sandbox.control.addFault({ service: "relay", status: 503, times: 1 });
    const since = h.emulator.calls.length;
    await h.driver.blockAction({ user: USERS.admin, action_id: SETTINGS_ACTIONS.check });
    await h.emulator.waitForCall(
      (c) => c.method === "views.update" && viewText(c).includes(":x: *Relay:*"),
      { since, timeoutMs: 5_000 },
    );
    const res = await h.driver.viewSubmission({
      user: USERS.admin,
      values: { [SETTINGS_FIELDS.longestToken]: "7d" },
    });
    expect(res.outcome.action).toBe("closed");
    await h.app.store.settings.delete(TEAM);
  });

  it("answers bad values with inline errors and saves nothing", async () => {
    await openSettings(USERS.admin);
    const before = await h.app.store.settings.get(TEAM);
    const res = await h.driver.viewSubmission({
      user: USERS.admin,
      values: {
        [SETTINGS_FIELDS.longestToken]: "forever",
        [SETTINGS_FIELDS.relayUsername]: "bad:name",
      },
    });
    expect(res.outcome.action).toBe("errors");
    const errors = (res.body as { errors: Record<string, string> }).errors;
    expect(Object.keys(errors).sort()).toEqual(
      [SETTINGS_FIELDS.longestToken, SETTINGS_FIELDS.relayUsername].sort(),
    );
    expect(errors[SETTINGS_FIELDS.longestToken]).toMatch(/like 90m, 12h, 14d or 2w/);
    expect(await h.app.store.settings.get(TEAM)).toEqual(before);
  });

  it("names only what changed in the audit channel, as the form labels it", async () => {
    // The form shows the sandbox's credentials; saved back untouched they are no change.
    await openSettings(USERS.admin);
    const since = h.emulator.calls.length;
    const res = await h.driver.viewSubmission({
      user: USERS.admin,
      values: { [SETTINGS_FIELDS.auditChannel]: CHANNELS.audit },
    });
    expect(res.outcome.action).toBe("closed");
    const audited = await h.emulator.waitForCall(
      (c) => c.method === "chat.postMessage" && c.args.channel === CHANNELS.audit,
      { since, timeoutMs: 5_000 },
    );
    expect(String(audited.args.text)).toMatch(/ changed On Air's settings: audit channel\.$/);
    const entry = (await h.app.deps.store.audit.list(TEAM)).find(
      (a) => a.entry.action === "settings.update",
    )?.entry;
    expect(entry?.details).toEqual({ fields: "auditChannel" });
  });

  it("saves, keeps secrets write-only, drops cached tokens and audits without secrets", async () => {
    const deps = h.app.deps;
    const future = Date.now() + 3_600_000;
    await deps.store.users.put(TEAM, USERS.omar, {
      email: "omar@example.com",
      userId: 7,
      enterpriseId: 1001,
    });
    await deps.store.tokens.cache.set(enterpriseTokenKey(TEAM), {
      accessToken: "cached-enterprise-token-1",
      expiresAt: future,
      enterpriseId: 1001,
    });
    await deps.store.tokens.cache.set(userTokenKey(TEAM, "omar@example.com"), {
      accessToken: "cached-user-token-1",
      expiresAt: future,
      userId: 7,
      enterpriseId: 1001,
    });

    await openSettings(USERS.admin);
    const since = h.emulator.calls.length;
    const res = await h.driver.viewSubmission({
      user: USERS.admin,
      values: {
        [SETTINGS_FIELDS.eventsKey]: "my-app-key",
        [SETTINGS_FIELDS.eventsSecret]: NEW_SECRET,
        [SETTINGS_FIELDS.relayUsername]: "acme",
        [SETTINGS_FIELDS.relayPassword]: NEW_PASSWORD,
        [SETTINGS_FIELDS.whoMaySchedule]: "group:S0ORGANIZERS",
        [SETTINGS_FIELDS.whoMayMint]: "admins",
        [SETTINGS_FIELDS.longestToken]: "12h",
        [SETTINGS_FIELDS.auditChannel]: CHANNELS.audit,
      },
    });
    expect(res.outcome.action).toBe("closed");
    await h.emulator.waitForCall(
      (c) =>
        c.method === "chat.postEphemeral" && String(c.args.text).includes("settings are saved"),
      { since, timeoutMs: 5_000 },
    );
    const audited = await h.emulator.waitForCall(
      (c) => c.method === "chat.postMessage" && c.args.channel === CHANNELS.audit,
      { since, timeoutMs: 5_000 },
    );
    const line = String(audited.args.text);
    expect(line).toContain("events app key, events app secret, relay username, relay password");
    expect(line).toContain("who may schedule events");
    expect(line).not.toMatch(/[a-z][A-Z]/);

    const saved = await deps.store.settings.get(TEAM);
    expect(saved).toMatchObject({
      eventsAppKey: "my-app-key",
      eventsAppSecret: NEW_SECRET,
      relayUsername: "acme",
      relayPassword: NEW_PASSWORD,
      policy: { whoMaySchedule: { usergroup: "S0ORGANIZERS" }, whoMayMint: "admins" },
      longestTokenMs: 12 * 3_600_000,
      auditChannel: CHANNELS.audit,
      updatedBy: USERS.admin,
    });
    const raw = JSON.stringify(await deps.store.get(`settings:${TEAM}`));
    expect(raw).not.toContain(NEW_SECRET);
    expect(raw).not.toContain(NEW_PASSWORD);
    expect(await deps.store.tokens.cache.get(enterpriseTokenKey(TEAM))).toBeUndefined();
    expect(
      await deps.store.tokens.cache.get(userTokenKey(TEAM, "omar@example.com")),
    ).toBeUndefined();
    const audit = await deps.store.audit.list(TEAM);
    const entry = audit.find((a) => a.entry.action === "settings.update")?.entry;
    expect(entry?.actor).toBe(USERS.admin);
    expect(JSON.stringify(audit)).not.toContain(NEW_SECRET);

    // Reopened: secrets stay hidden; leaving them empty keeps them.
    const reopened = await openSettings(USERS.admin);
    expect(viewText(reopened)).not.toContain(NEW_SECRET);
    expect(viewText(reopened)).not.toContain(NEW_PASSWORD);
    expect(
      element(topModal(USERS.admin).view.blocks, SETTINGS_FIELDS.longestToken).initial_value,
    ).toBe("12h");
    const again = await h.driver.viewSubmission({
      user: USERS.admin,
      values: { [SETTINGS_FIELDS.longestToken]: "2w" },
    });
    expect(again.outcome.action).toBe("closed");
    await expect
      .poll(async () => (await deps.store.settings.get(TEAM))?.longestTokenMs)
      .toBe(14 * 86_400_000);
    const kept = await deps.store.settings.get(TEAM);
    expect(kept?.eventsAppSecret).toBe(NEW_SECRET);
    expect(kept?.relayPassword).toBe(NEW_PASSWORD);
  });

  it("says so inline when the store cannot be read at Save", async () => {
    await openSettings(USERS.admin);
    await h.app.store.close();
    const res = await h.driver.viewSubmission({ user: USERS.admin });
    expect(res.status).toBe(200);
    expect(res.outcome.action).toBe("errors");
    expect((res.body as { errors: Record<string, string> }).errors).toEqual({
      [SETTINGS_FIELDS.eventsKey]:
        "On Air could not read its settings just now, so nothing was saved. Try Save again in a minute.",
    });
  });

  it("leaks no secret into logs or Slack calls", async () => {
    // The relay tokens the Check minted, as the relay lists them.
    const minted = await h.app.deps.relay.listAccessTokens({
      username: "sandbox",
      password: "sandbox",
    });
    const relayTokens = minted
      .filter((t) => t.clientName === "On Air check")
      .map((t) => t.accessToken);
    expect(relayTokens.length).toBeGreaterThan(0);
    const scan = createSecretScanner();
    for (const line of h.logs) scan.add("log", line);
    // What the app sent Slack; Slack's answers to views.update echo what the admin typed.
    for (const c of h.emulator.calls) scan.add(`slack ${c.method}`, JSON.stringify(c.args));
    scan.assertNoSecrets([
      ...h.secrets,
      NEW_SECRET,
      NEW_PASSWORD,
      "sandbox-secret",
      "wrong-password-123",
      "wrong-events-secret-456",
      ...relayTokens,
    ]);
  });
});
