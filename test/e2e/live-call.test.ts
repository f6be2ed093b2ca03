import { callsOf } from "@onair/slack-emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventOf } from "../../src/domain/subscription.ts";
import { subscriptionOf } from "../../src/domain/subscriptions.ts";
import { SETTINGS_ACTIONS, SETTINGS_VIEW } from "../../src/ids.ts";
import { botScopes } from "../../src/slack/scopes.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { notifyCard } from "../helpers/live-card.ts";
import { eventually, seedEvent } from "../helpers/live-fixtures.ts";

/**
 * The live event as a Slack call (README, "Using it in Slack"): calls.add once per
 * instance with the call block in the card's thread; Slack users among the attendees added and
 * removed only while the workspace shows attendee e-mails; calls.update when the event's title
 * changes; calls.end once when the instance ends. A workspace that has not granted calls:write
 * and calls:read goes on as before: no call, one refusal, and the settings Check names them.
 */

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ liveOptions: { digestEveryMs: 300 } });
});
afterAll(async () => {
  await h?.close();
});

const methodCalls = (harness: Harness, method: string, ok = true) =>
  harness.emulator.calls.filter((c) => c.method === method && c.ok === ok);

async function showEmails(harness: Harness, show: boolean): Promise<void> {
  const s = await harness.app.store.settings.getOrDefault(TEAM);
  await harness.app.store.settings.put(TEAM, { ...s, privacy: { showAttendeeEmails: show } });
}

const callBlocks = (harness: Harness, ts: string) =>
  harness.emulator.workspace
    .replies(CHANNELS.events, ts)
    .filter((m) => JSON.stringify(m.blocks ?? "").includes('"type":"call"'));

describe("the live event as a Slack call", () => {
  it("adds the call once, takes in only Slack users whose e-mails are shown, updates and ends it once", async () => {
    await showEmails(h, false);
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Town hall call",
    });
    const ts = await notifyCard(h, event, CHANNELS.events);
    const c = h.sandbox.control;
    // Not live yet: no call.
    await c.setState(event.eventId, { state: "PREP_EVENT" });
    await new Promise((r) => setTimeout(r, 1_000));
    expect(methodCalls(h, "calls.add")).toHaveLength(0);

    const live = await c.setState(event.eventId, { state: "IN_EVENT" });
    const added = await h.emulator.waitForCall((x) => x.method === "calls.add" && x.ok, {
      timeoutMs: 20_000,
    });
    const rec = await h.app.store.events.get(TEAM, event.eventId);
    const sub = rec ? await subscriptionOf(h.app.deps, rec) : undefined;
    const e = sub ? eventOf(sub.sub) : undefined;
    expect(added.args).toMatchObject({
      external_unique_id: `${event.eventId}:${live.instanceId}`,
      join_url: e?.attendeeUrl,
      created_by: USERS.omar,
      title: "Town hall call",
    });
    const call = callsOf(h.emulator.workspace).find(
      (x) => x.external_unique_id === `${event.eventId}:${live.instanceId}`,
    );
    expect(call).toBeDefined();
    await eventually(() => (callBlocks(h, ts).length > 0 ? true : undefined), "the call block");
    expect(JSON.stringify(callBlocks(h, ts)[0]?.blocks)).toContain(call?.id ?? "?");

    // E-mails hidden (the workspace's privacy setting): nobody is put in the call.
    const joined = await c.attendees(event.eventId, {
      join: [
        { name: "Mia", email: "mia@example.com" },
        { name: "Ada", email: "ADA@example.com" },
        { name: "Guest", email: "guest@elsewhere.example" },
        { name: "No mail" },
      ],
    });
    await h.emulator.waitForCall(
      (x) => x.method === "chat.update" && JSON.stringify(x.args.blocks ?? "").includes("*4*"),
      { timeoutMs: 20_000 },
    );
    await new Promise((r) => setTimeout(r, 1_500));
    expect(methodCalls(h, "calls.participants.add")).toHaveLength(0);
    expect(methodCalls(h, "users.lookupByEmail")).toHaveLength(0);

    // Shown: the Slack members among them, and nobody else.
    await showEmails(h, true);
    // The run reads the setting anew within seconds; the next join brings the call up to date.
    await new Promise((r) => setTimeout(r, 5_500));
    await c.attendees(event.eventId, { join: [{ name: "Kei", email: "kei@example.com" }] });
    const inCall = () =>
      (callsOf(h.emulator.workspace).find((x) => x.id === call?.id)?.users ?? [])
        .map((u) => u.slack_id)
        .sort();
    await eventually(
      () => (inCall().length === 3 ? true : undefined),
      `three Slack users in the call: ${inCall().join(",")}`,
      20_000,
    );
    expect(inCall()).toEqual([USERS.admin, "U0KEI0ORG", USERS.member].sort());

    // Mia leaves: she leaves the call.
    const mia = joined.joined.find((j) => j.name === "Mia");
    await c.attendees(event.eventId, { leave: [mia?.endpointGuid ?? ""] });
    await eventually(
      () => (inCall().length === 2 ? true : undefined),
      `Mia out of the call: ${inCall().join(",")}`,
      20_000,
    );
    expect(inCall()).not.toContain(USERS.member);
    expect(methodCalls(h, "calls.participants.remove").length).toBeGreaterThan(0);

    // The event's title changes while live: the call's title follows.
    if (rec && sub) {
      const renamed = { ...(sub.sub.event as object), title: "Town hall call (renamed)" };
      await h.app.store.subscriptions.put(sub.id, { ...sub.sub, event: renamed });
    }
    await c.attendees(event.eventId, { join: [{ name: "Late", email: "late@elsewhere.example" }] });
    const updated = await h.emulator.waitForCall((x) => x.method === "calls.update" && x.ok, {
      timeoutMs: 20_000,
    });
    expect(updated.args).toMatchObject({ id: call?.id, title: "Town hall call (renamed)" });

    // The instance ends: the call ends, once.
    await c.setState(event.eventId, { state: "NOT_STARTED" });
    await h.emulator.waitForCall((x) => x.method === "calls.end" && x.ok, { timeoutMs: 20_000 });
    await new Promise((r) => setTimeout(r, 2_000));
    expect(methodCalls(h, "calls.end")).toHaveLength(1);
    expect(methodCalls(h, "calls.end", false)).toHaveLength(0);
    expect(methodCalls(h, "calls.add")).toHaveLength(1);
    expect(methodCalls(h, "calls.update")).toHaveLength(1);
    expect(callBlocks(h, ts)).toHaveLength(1);
    expect(callsOf(h.emulator.workspace).find((x) => x.id === call?.id)?.date_end).toBeDefined();
  }, 120_000);
});

describe("a workspace that has not granted the Calls API yet", () => {
  let old: Harness;
  afterAll(async () => {
    await old?.close();
  });

  it("keeps its card, thread and report, asks once, and the settings Check names the reinstall", async () => {
    old = await startHarness({
      botScopes: botScopes().filter((s) => s !== "calls:write" && s !== "calls:read"),
      liveOptions: { digestEveryMs: 300 },
    });
    const event = await seedEvent(old.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "No calls here",
    });
    const ts = await notifyCard(old, event, CHANNELS.events);
    const c = old.sandbox.control;
    await c.setState(event.eventId, { state: "IN_EVENT" });
    await c.attendees(event.eventId, { count: 3 });
    await old.emulator.waitForCall(
      (x) => x.method === "chat.update" && JSON.stringify(x.args.blocks ?? "").includes("*3*"),
      { timeoutMs: 20_000 },
    );
    // Live: the app tries the call once, and Slack says the scope is missing.
    await old.emulator.waitForCall((x) => x.method === "calls.add", { timeoutMs: 20_000 });
    await c.attendees(event.eventId, { count: 2 });
    await c.setState(event.eventId, { state: "NOT_STARTED" });
    await eventually(
      () =>
        old.emulator.workspace.replies(CHANNELS.events, ts).some((m) => Array.isArray(m.files))
          ? true
          : undefined,
      "the report",
      20_000,
    );
    // One refusal for the instance, not one per turn; nothing else of the Calls API.
    const refused = old.emulator.calls.filter((x) => x.method.startsWith("calls."));
    expect(refused.map((x) => `${x.method}:${x.error}`)).toEqual(["calls.add:missing_scope"]);
    expect(callBlocks(old, ts)).toHaveLength(0);

    let since = old.emulator.calls.length;
    await old.driver.slashCommand({
      user: USERS.admin,
      channel: CHANNELS.general,
      text: "settings",
    });
    await old.emulator.waitForCall(
      (x) =>
        x.method === "views.update" &&
        (x.args.view as { callback_id?: string } | undefined)?.callback_id === SETTINGS_VIEW,
      { since, timeoutMs: 5_000 },
    );
    since = old.emulator.calls.length;
    await old.driver.blockAction({ user: USERS.admin, action_id: SETTINGS_ACTIONS.check });
    const done = await old.emulator.waitForCall(
      (x) => x.method === "views.update" && JSON.stringify(x.args.view).includes("Slack:"),
      { since, timeoutMs: 5_000 },
    );
    const text = JSON.stringify(done.args.view);
    expect(text).toContain("has not granted calls:read, calls:write");
    expect(text).toContain(`${old.app.origin}/slack/install`);
  }, 90_000);
});
