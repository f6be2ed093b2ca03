import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { buildEventCard } from "../../src/blocks/event-card.ts";
import { CANCEL_ACTIONS, CARD_ACTIONS, EVENT_FIELDS as F, VIEWS } from "../../src/ids.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { createSecretScanner } from "../helpers/secrets.ts";
import {
  commandOpensModal,
  expectAllPayloadsValid,
  future,
  getUpstream,
  isMessageTo,
  scheduleViaForm,
  viewOf,
  waitFor,
} from "./organizer-helpers.ts";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

async function responseTo(user: string, text: string) {
  const since = h.emulator.calls.length;
  await h.driver.slashCommand({ user, channel: CHANNELS.general, text });
  return waitFor(
    h,
    (c) =>
      c.method === "response_url" || (c.method === "views.update" && c.args.view !== undefined),
    since,
  );
}

describe("edit", () => {
  it("pre-fills the form from GET and sends only the changed fields", async () => {
    const start = future(4);
    const id = await scheduleViaForm(h, USERS.omar, CHANNELS.general, "Design review", start, {
      [F.description]: "First cut",
      [F.panelists]: [USERS.kei],
      [F.recurrence]: "DAILY",
      [F.count]: "3",
      [F.audience]: ["enableChat"],
    });
    const call = await commandOpensModal(
      h,
      USERS.omar,
      CHANNELS.general,
      "edit design",
      VIEWS.event,
    );
    const blocks = viewOf(call).blocks as Array<{
      block_id?: string;
      element?: Record<string, unknown>;
    }>;
    const el = (id: string) => blocks.find((b) => b.block_id === id)?.element ?? {};
    expect(el(F.title).initial_value).toBe("Design review");
    expect(el(F.description).initial_value).toBe("First cut");
    expect(el(F.start).initial_date_time).toBe(start / 1000);
    expect(el(F.panelists).initial_users).toEqual([USERS.kei]);
    expect(el(F.count).initial_value).toBe("3");
    expect(blocks.some((b) => b.block_id === F.channel)).toBe(false);

    h.sandbox.control.clearLog();
    const since = h.emulator.calls.length;
    const res = await h.driver.viewSubmission({
      user: USERS.omar,
      values: { [F.title]: "Design review v2", [F.audience]: ["enableChat", "enableQnA"] },
    });
    expect(res.outcome.action).toBe("closed");
    await waitFor(h, isMessageTo(USERS.omar, /Saved: title, enableQnA/), since);
    const puts = h.sandbox.control.log().filter((e) => e.method === "PUT");
    expect(puts).toHaveLength(1);
    expect(puts[0]?.body).toEqual({ title: "Design review v2", enableQnA: true });
    const after = await getUpstream(h, "omar@example.com", id);
    expect(after).toMatchObject({
      title: "Design review v2",
      description: "First cut",
      enableChat: true,
      enableQnA: true,
    });
    expect(after.recurrencePattern).toMatchObject({ recurrenceCount: 3, frequency: 1 });
    await vi.waitFor(async () => {
      const audit = await h.app.store.audit.list("T0ONAIR");
      expect(audit.some((a) => a.entry.action === "event.edit" && a.entry.target === id)).toBe(
        true,
      );
    });
  });

  it("a start moved into the past comes back inline; an unchanged past start is allowed", async () => {
    await commandOpensModal(h, USERS.omar, CHANNELS.general, "edit design", VIEWS.event);
    const res = await h.driver.viewSubmission({
      user: USERS.omar,
      values: { [F.start]: new Date(Date.now() - 3_600_000) },
    });
    expect(res.outcome).toMatchObject({
      action: "errors",
      errors: { [F.start]: expect.stringMatching(/past/) },
    });
    await h.driver.viewClosed({ user: USERS.omar });
  });

  it("refuses someone else's event in plain words", async () => {
    const res = await responseTo(USERS.kei, "edit design");
    expect(String(res.args.text)).toMatch(/None of your events/);
  });
});

describe("list and show", () => {
  it("lists the user's events soonest first and shows one by the start of its title", async () => {
    await scheduleViaForm(h, USERS.kei, CHANNELS.general, "Later launch", future(9));
    await scheduleViaForm(h, USERS.kei, CHANNELS.general, "Sooner sync", future(5));
    h.sandbox.control.clearLog();
    const list = await responseTo(USERS.kei, "list");
    const text = JSON.stringify(list.args.blocks);
    expect(text.indexOf("Sooner sync")).toBeGreaterThan(-1);
    expect(text.indexOf("Sooner sync")).toBeLessThan(text.indexOf("Later launch"));
    expect(text).not.toContain("Design review");
    // Refreshed by GET.
    expect(h.sandbox.control.log().filter((e) => e.method === "GET").length).toBeGreaterThanOrEqual(
      2,
    );

    const show = await responseTo(USERS.kei, "show later");
    expect(show.args.response_type).toBe("ephemeral");
    const shown = JSON.stringify(show.args.blocks);
    expect(shown).toContain("Later launch");
    expect(shown).toContain("moderator link");
  });

  it("an ambiguous name lists the candidates", async () => {
    await scheduleViaForm(h, USERS.kei, CHANNELS.general, "Standup east", future(6));
    await scheduleViaForm(h, USERS.kei, CHANNELS.general, "Standup west", future(7));
    const res = await responseTo(USERS.kei, "show standup");
    const text = String(res.args.text);
    expect(text).toMatch(/More than one/);
    expect(text).toContain("Standup east");
    expect(text).toContain("Standup west");
  });
});

describe("cancel", () => {
  it("asks first, then deletes upstream, marks the event cancelled and audits", async () => {
    const settings = await h.app.store.settings.getOrDefault(TEAM);
    await h.app.store.settings.put(TEAM, { ...settings, auditChannel: CHANNELS.audit });
    const id = await scheduleViaForm(h, USERS.kei, CHANNELS.general, "Doomed webinar", future(8));
    const call = await commandOpensModal(
      h,
      USERS.kei,
      CHANNELS.general,
      `cancel ${id}`,
      VIEWS.cancel,
    );
    expect(JSON.stringify(viewOf(call).blocks)).toContain("Doomed webinar");
    // Nothing deleted yet: the modal is the question.
    expect(h.sandbox.control.log().some((e) => e.method === "DELETE" && e.path.includes(id))).toBe(
      false,
    );
    // The yes is a red button (style "danger"), not the modal's submit Slack draws in green.
    const yes = JSON.stringify(viewOf(call).blocks);
    expect(yes).toContain('"style":"danger"');
    expect(viewOf(call).submit).toBeUndefined();
    const since = h.emulator.calls.length;
    await h.driver.blockAction({ user: USERS.kei, action_id: CANCEL_ACTIONS.yes });
    await waitFor(h, isMessageTo(USERS.kei, /Cancelled/), since);
    // The modal says it is done, with no button left to press.
    const done = await waitFor(
      h,
      (c) => c.method === "views.update" && JSON.stringify(viewOf(c)).includes("Cancelled"),
      since,
    );
    expect(JSON.stringify(viewOf(done).blocks)).not.toContain(CANCEL_ACTIONS.yes);
    expect(
      h.sandbox.control
        .log()
        .some((e) => e.method === "DELETE" && e.path.endsWith(`/events/${id}`)),
    ).toBe(true);
    expect((await h.app.store.events.get("T0ONAIR", id))?.cancelled).toBe(true);
    await vi.waitFor(async () => {
      const audit = await h.app.store.audit.list("T0ONAIR");
      expect(audit.some((a) => a.entry.action === "event.cancel" && a.entry.target === id)).toBe(
        true,
      );
    });
    // The audit channel hears of both, on the channel's pace (a second apart at most).
    await vi.waitFor(
      () => {
        const posts = h.emulator.calls.filter(
          (c) => c.method === "chat.postMessage" && c.args.channel === CHANNELS.audit,
        );
        expect(posts.some((c) => /scheduled \*Doomed webinar\*/.test(String(c.args.text)))).toBe(
          true,
        );
        expect(posts.some((c) => /cancelled \*Doomed webinar\*/.test(String(c.args.text)))).toBe(
          true,
        );
      },
      { timeout: 5_000 },
    );
    await h.app.store.settings.put(TEAM, settings);
    const list = await responseTo(USERS.kei, "list");
    expect(JSON.stringify(list.args.blocks)).not.toContain("Doomed webinar");
  });

  it("closing the confirmation keeps the event", async () => {
    const id = await scheduleViaForm(h, USERS.kei, CHANNELS.general, "Kept webinar", future(8));
    await commandOpensModal(h, USERS.kei, CHANNELS.general, "cancel kept", VIEWS.cancel);
    await h.driver.viewClosed({ user: USERS.kei });
    expect(h.sandbox.control.log().some((e) => e.method === "DELETE" && e.path.includes(id))).toBe(
      false,
    );
    expect((await h.app.store.events.get("T0ONAIR", id))?.cancelled).toBeUndefined();
  });
});

describe("the event card's buttons", () => {
  async function postCard(eventId: string, channel: string = CHANNELS.events) {
    const event = await getUpstream(h, "kei@example.com", eventId);
    const card = buildEventCard({ event });
    const bulk = await h.app.deps.bulkClient(TEAM);
    const res = await bulk.chat.postMessage({
      channel,
      text: card.text,
      blocks: card.blocks,
    });
    return String(res.ts);
  }

  it("Edit opens the pre-filled form; Cancel asks, then cancels", async () => {
    const id = await scheduleViaForm(h, USERS.kei, CHANNELS.general, "Card webinar", future(10));
    const ts = await postCard(id);
    let since = h.emulator.calls.length;
    await h.driver.blockAction({
      user: USERS.kei,
      action_id: CARD_ACTIONS.edit,
      channel: CHANNELS.events,
      message_ts: ts,
    });
    const form = await waitFor(
      h,
      (c) => c.method === "views.update" && viewOf(c).callback_id === VIEWS.event,
      since,
    );
    expect(JSON.stringify(viewOf(form).blocks)).toContain("Card webinar");
    await h.driver.viewClosed({ user: USERS.kei });

    since = h.emulator.calls.length;
    await h.driver.blockAction({
      user: USERS.kei,
      action_id: CARD_ACTIONS.cancel,
      channel: CHANNELS.events,
      message_ts: ts,
    });
    await waitFor(
      h,
      (c) => c.method === "views.update" && viewOf(c).callback_id === VIEWS.cancel,
      since,
    );
    since = h.emulator.calls.length;
    await h.driver.blockAction({ user: USERS.kei, action_id: CANCEL_ACTIONS.yes });
    await waitFor(h, isMessageTo(USERS.kei, /Cancelled/), since);
    expect((await h.app.store.events.get(TEAM, id))?.cancelled).toBe(true);
  });

  it("someone else pressing Edit is told who may change it", async () => {
    const id = await scheduleViaForm(h, USERS.kei, CHANNELS.general, "Guarded webinar", future(10));
    const ts = await postCard(id);
    const since = h.emulator.calls.length;
    await h.driver.blockAction({
      user: USERS.member,
      action_id: CARD_ACTIONS.edit,
      channel: CHANNELS.events,
      message_ts: ts,
    });
    const call = await waitFor(h, (c) => c.method === "views.update", since);
    expect(JSON.stringify(viewOf(call).blocks)).toContain(
      `Only the event's organizer, <@${USERS.kei}>`,
    );
    await h.driver.viewClosed({ user: USERS.member });
  });

  it("an admin's edit of someone else's event: saved, the links and passcodes go only to the organizer", async () => {
    const id = await scheduleViaForm(
      h,
      USERS.kei,
      CHANNELS.general,
      "Admin-fixed webinar",
      future(11),
    );
    // In #general: Slack paces posts per channel, and the other tests post to #events.
    const ts = await postCard(id, CHANNELS.general);
    let since = h.emulator.calls.length;
    await h.driver.blockAction({
      user: USERS.admin,
      action_id: CARD_ACTIONS.edit,
      channel: CHANNELS.general,
      message_ts: ts,
    });
    await waitFor(
      h,
      (c) => c.method === "views.update" && viewOf(c).callback_id === VIEWS.event,
      since,
    );
    since = h.emulator.calls.length;
    const res = await h.driver.viewSubmission({
      user: USERS.admin,
      values: { [F.title]: "Admin-fixed webinar v2" },
    });
    expect(res.outcome.action).toBe("closed");
    const told = await waitFor(
      h,
      isMessageTo(USERS.admin, /Saved: title\..*go only to its organizer/),
      since,
    );
    const toKei = await waitFor(h, isMessageTo(USERS.kei, /changed your event: title/), since);
    const event = await getUpstream(h, "kei@example.com", id);
    const secrets = [event.moderatorUrl, event.panelistUrl, event.participantPasscode].filter(
      (x): x is string => typeof x === "string" && x.length > 0,
    );
    expect(secrets.length).toBeGreaterThan(0);
    // The organizer has them; nothing the admin was sent does.
    for (const x of secrets) expect(JSON.stringify(toKei.args)).toContain(x);
    const toAdmin = h.emulator.calls
      .slice(since)
      .filter((c) => isMessageTo(USERS.admin, /./)(c) || c.args.user === USERS.admin);
    expect(toAdmin).toContain(told);
    // A secret as a string of its own: the 4-digit passcode may occur inside an id or a time.
    const alone = (x: string) =>
      new RegExp(`(?<![0-9A-Za-z])${x.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}(?![0-9A-Za-z])`);
    for (const c of toAdmin)
      for (const x of secrets) expect(JSON.stringify(c.args)).not.toMatch(alone(x));
  });

  it("Notify asks for a channel and reminders", async () => {
    const id =
      (await h.app.store.events.list(TEAM)).find((r) => r.title === "Guarded webinar")?.eventId ??
      "";
    const ts = await postCard(id);
    let since = h.emulator.calls.length;
    await h.driver.blockAction({
      user: USERS.kei,
      action_id: CARD_ACTIONS.notify,
      channel: CHANNELS.events,
      message_ts: ts,
    });
    await waitFor(
      h,
      (c) => c.method === "views.update" && viewOf(c).callback_id === VIEWS.notify,
      since,
    );
    since = h.emulator.calls.length;
    await h.driver.viewSubmission({
      user: USERS.kei,
      values: { nt_channel: CHANNELS.townHall, nt_noise: "every" },
    });
    await waitFor(h, isMessageTo(USERS.kei, /now gets the live card/), since);
    // The live area subscribed the channel at the level picked.
    const subs = await h.app.store.subscriptions.forEvent(TEAM, id);
    expect(JSON.stringify(subs)).toContain(`"${CHANNELS.townHall}":"every"`);
  });
});

describe("cards follow the organizer's changes", () => {
  it("schedule posts the card to the chosen channel; edit updates it; cancel marks it cancelled", async () => {
    const since = h.emulator.calls.length;
    const id = await scheduleViaForm(
      h,
      USERS.omar,
      CHANNELS.general,
      "Followed webinar",
      future(11),
      {
        [F.channel]: CHANNELS.townHall,
      },
    );
    const posted = await waitFor(
      h,
      (c) =>
        c.method === "chat.postMessage" &&
        c.args.channel === CHANNELS.townHall &&
        /Followed webinar/.test(JSON.stringify(c.args)),
      since,
    );
    const ts = String((posted.response as { ts?: string } | undefined)?.ts);

    await commandOpensModal(h, USERS.omar, CHANNELS.general, `edit ${id}`, VIEWS.event);
    let s2 = h.emulator.calls.length;
    await h.driver.viewSubmission({
      user: USERS.omar,
      values: { [F.title]: "Followed webinar, renamed" },
    });
    await waitFor(
      h,
      (c) =>
        c.method === "chat.update" && c.args.ts === ts && /renamed/.test(JSON.stringify(c.args)),
      s2,
    );

    await commandOpensModal(h, USERS.omar, CHANNELS.general, `cancel ${id}`, VIEWS.cancel);
    s2 = h.emulator.calls.length;
    await h.driver.blockAction({ user: USERS.omar, action_id: CANCEL_ACTIONS.yes });
    await waitFor(
      h,
      (c) =>
        c.method === "chat.update" && c.args.ts === ts && /Cancelled/.test(JSON.stringify(c.args)),
      s2,
    );
  });
});

describe("App Home", () => {
  it("shows link status and upcoming events with their actions; its Edit button opens the form", async () => {
    const since = h.emulator.calls.length;
    await h.driver.event({ type: "app_home_opened", user: USERS.kei, tab: "home" });
    const call = await waitFor(
      h,
      (c) => c.method === "views.publish" && c.args.user_id === USERS.kei,
      since,
    );
    const text = JSON.stringify(viewOf(call));
    expect(text).toContain("kei@example.com");
    expect(text).toContain("Sooner sync");
    expect(text).not.toContain("Doomed webinar");
    const s2 = h.emulator.calls.length;
    const id = (await h.app.store.events.list("T0ONAIR")).find(
      (r) => r.title === "Sooner sync",
    )?.eventId;
    await h.driver.blockAction({
      user: USERS.kei,
      action_id: "onair_card_edit",
      block_id: `home_event_${id}`,
    });
    await waitFor(
      h,
      (c) => c.method === "views.update" && viewOf(c).callback_id === VIEWS.event,
      s2,
    );
    await h.driver.viewClosed({ user: USERS.kei });
  });

  it("every payload passed Block Kit limits and no secret leaked", () => {
    expectAllPayloadsValid(h);
    const scan = createSecretScanner();
    for (const line of h.logs) scan.add("log", line);
    for (const c of h.emulator.calls) scan.add(`slack ${c.method}`, JSON.stringify(c.args));
    scan.assertNoSecrets([...h.secrets, "sandbox-secret"]);
  });
});
