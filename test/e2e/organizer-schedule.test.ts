import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { EVENT_FIELDS, VIEWS } from "../../src/ids.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { createSecretScanner } from "../helpers/secrets.ts";
import {
  commandOpensModal,
  expectAllPayloadsValid,
  future,
  getUpstream,
  HOUR,
  isMessageTo,
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

const F = EVENT_FIELDS;
const DAY = 24 * HOUR;
/** The day a datepicker shows for an instant (the event's zone, Berlin, is an hour or two on). */
const isoDay = (ms: number) =>
  new Intl.DateTimeFormat("en-CA", { timeZone: "Europe/Berlin" }).format(new Date(ms));

describe("/onair schedule", () => {
  it("opens the form with the user's own zone preselected and default reminders", async () => {
    const call = await commandOpensModal(h, USERS.omar, CHANNELS.general, "schedule", VIEWS.event);
    const view = viewOf(call);
    const blocks = view.blocks as Array<{
      block_id?: string;
      element: {
        initial_option: { value: string };
        options: unknown[];
        initial_options: { value: string }[];
      };
    }>;
    const tz = blocks.find((b) => b.block_id === F.timezone);
    expect(tz?.element.initial_option.value).toBe("Europe/Berlin");
    expect(tz?.element.options.length).toBeLessThanOrEqual(100);
    const rem = blocks.find((b) => b.block_id === F.reminders);
    expect(rem?.element.initial_options.map((o: { value: string }) => o.value)).toEqual([
      "60",
      "10",
    ]);
    // The placeholder came first: views.open inside the trigger's 3 s, before any slow work.
    const open = h.emulator.calls
      .filter((c) => c.method === "views.open" && c.seq < call.seq)
      .at(-1);
    expect(open?.ok).toBe(true);
    await h.driver.viewClosed({ user: USERS.omar });
  });

  it("creates the event with every field set; the sandbox holds exactly those values", async () => {
    await commandOpensModal(h, USERS.omar, CHANNELS.general, "schedule", VIEWS.event);
    const start = future(3);
    const since = h.emulator.calls.length;
    h.sandbox.control.clearLog();
    const res = await h.driver.viewSubmission({
      user: USERS.omar,
      values: {
        [F.title]: "Quarterly town hall",
        [F.description]: "Numbers, roadmap and questions",
        [F.start]: new Date(start),
        [F.end]: new Date(start + 90 * 60_000),
        [F.timezone]: "Europe/Paris",
        [F.recurrence]: "DAILY",
        [F.count]: "5",
        [F.frequency]: "2",
        [F.access]: ["restricted", "requireEmail"],
        [F.audience]: ["enableChat", "enableQnA", "enableQnAAnonymous", "enableAttendeeRoster"],
        [F.production]: [
          "enableAutoRecord",
          "enablePSTN",
          "enableWaterMark",
          "enableIntroOutro",
          "customIntroOutro",
        ],
        [F.panelists]: [USERS.kei, USERS.member],
        [F.moderators]: [USERS.admin],
        [F.panelistMessage]: "Panelists: join 15 minutes early",
        [F.moderatorMessage]: "Moderators: check the Q&A",
        [F.attendeeMessage]: "Welcome!",
        [F.channel]: CHANNELS.events,
        [F.noise]: "counter",
        [F.reminders]: ["1440", "10"],
      },
    });
    expect(res.outcome.action).toBe("closed");
    const done = await waitFor(h, isMessageTo(USERS.omar, /Scheduled/), since);
    // The organizer gets the private details, not a channel.
    expect(done.method).not.toBe("response_url");
    const text = JSON.stringify(done.args.blocks);
    expect(text).toContain("moderator link");

    const create = h.sandbox.control
      .log()
      .find((e) => e.method === "POST" && /\/events$/.test(e.path));
    expect(create?.body).toMatchObject({
      title: "Quarterly town hall",
      recurrencePattern: { recurrenceType: "DAILY", recurrenceCount: "5", frequency: "2" },
    });
    const eventId = /\/events\/([^/]+)$/.exec(
      h.sandbox.control.log().find((e) => e.method === "GET" && /\/events\/[^/]+$/.test(e.path))
        ?.path ?? "",
    )?.[1];
    expect(eventId).toBeTruthy();
    const e = await getUpstream(h, "omar@example.com", eventId!);
    expect(e).toMatchObject({
      title: "Quarterly town hall",
      description: "Numbers, roadmap and questions",
      start,
      end: start + 90 * 60_000,
      timezone: "Europe/Paris",
      restricted: true,
      requireEmail: true,
      enableChat: true,
      enableQnA: true,
      enableQnAAnonymous: true,
      enableAttendeeRoster: true,
      enableAutoRecord: true,
      enablePSTN: true,
      enableWaterMark: true,
      enableIntroOutro: true,
      customIntroOutro: true,
      panelists: [{ email: "kei@example.com" }, { email: "mia@example.com" }],
      moderators: [{ email: "ada@example.com" }],
      attendees: [],
      panelistMessage: "Panelists: join 15 minutes early",
      moderatorMessage: "Moderators: check the Q&A",
      attendeeMessage: "Welcome!",
    });
    // Strings out, numbers back.
    expect(e.recurrencePattern).toMatchObject({
      recurrenceType: "DAILY",
      recurrenceCount: 5,
      frequency: 2,
      endDate: null,
    });
    const record = await h.app.store.events.get("T0ONAIR", eventId!);
    expect(record).toMatchObject({ organizer: USERS.omar, title: "Quarterly town hall" });
    await vi.waitFor(async () => {
      const audit = await h.app.store.audit.list("T0ONAIR");
      expect(audit.map((a) => a.entry.action)).toContain("event.schedule");
    });
    // App Home is refreshed after the change.
    const home = await waitFor(
      h,
      (c) => c.method === "views.publish" && c.args.user_id === USERS.omar,
      since,
    );
    expect(JSON.stringify(home.args.view)).toContain("Quarterly town hall");
    // The chosen channel gets the public card (posted by the live area), without organizer details.
    const card = await waitFor(
      h,
      (c) =>
        c.method === "chat.postMessage" &&
        c.args.channel === CHANNELS.events &&
        /Quarterly town hall/.test(JSON.stringify(c.args)),
      since,
    );
    expect(JSON.stringify(card.args)).toContain(e.attendeeUrl);
    expect(JSON.stringify(card.args)).not.toContain(e.moderatorUrl);
    const subs = await h.app.store.subscriptions.forEvent("T0ONAIR", eventId!);
    expect(JSON.stringify(subs)).toContain(`"${CHANNELS.events}":"counter"`);
    // Organizer-only details are not echoed into the logs either.
    expect(h.logs.some((l) => l.includes(e.moderatorUrl) || l.includes(e.panelistUrl))).toBe(false);
    // Organizer-only details never reach a channel. (The passcode is 4 random digits: looked
    // for as a number of its own, since it may occur inside the join link's id or a timestamp.)
    const passcode = new RegExp(`(?<![0-9])${e.participantPasscode}(?![0-9])`);
    for (const c of h.emulator.calls.slice(since)) {
      if (c.method === "chat.postMessage" && String(c.args.channel).startsWith("C")) {
        expect(JSON.stringify(c.args)).not.toContain(e.moderatorUrl);
        expect(JSON.stringify(c.args)).not.toMatch(passcode);
        expect(JSON.stringify(c.args)).not.toMatch(/passcode/i);
      }
    }
  });

  it.each([
    ["an empty title", { [F.title]: "   " }, F.title, /title/],
    ["an overlong title", { [F.title]: "x".repeat(201) }, F.title, /200 characters/],
    [
      "a start in the past",
      { [F.start]: new Date(Date.now() - 2 * HOUR), [F.end]: new Date(Date.now() + HOUR) },
      F.start,
      /past/,
    ],
    ["an end before the start", { [F.end]: new Date(future(2) - HOUR) }, F.end, /after the start/],
    [
      "a daily series without a count or an end date",
      { [F.recurrence]: "DAILY" },
      F.count,
      /how many times .*or pick the date it runs until/,
    ],
    [
      "a daily series with both a count and an end date",
      { [F.recurrence]: "DAILY", [F.count]: "3", [F.until]: isoDay(future(9)) },
      F.until,
      /either after a number of times or on a date/,
    ],
    [
      "a daily series ending before its first day",
      { [F.recurrence]: "DAILY", [F.until]: isoDay(future(2) - 3 * DAY) },
      F.until,
      /before its first day/,
    ],
    [
      "a daily series running past 365 occurrences",
      { [F.recurrence]: "DAILY", [F.until]: isoDay(future(2) + 400 * DAY) },
      F.until,
      /at most 365/,
    ],
  ])("keeps the modal open with an inline error for %s", async (_name, bad, block, message) => {
    await commandOpensModal(h, USERS.kei, CHANNELS.general, "schedule", VIEWS.event);
    const start = future(2);
    const res = await h.driver.viewSubmission({
      user: USERS.kei,
      clientValidation: false,
      values: {
        [F.title]: "Valid title",
        [F.start]: new Date(start),
        [F.end]: new Date(start + HOUR),
        ...bad,
      },
    });
    expect(res.outcome.action).toBe("errors");
    const errors = (res.outcome as { errors: Record<string, string> }).errors;
    expect(Object.keys(errors)).toEqual([block]);
    expect(errors[block]).toMatch(message);
    await h.driver.viewClosed({ user: USERS.kei });
  });

  it("a daily series until a date: the service gets its endDate and no count; edit keeps it", async () => {
    await commandOpensModal(h, USERS.omar, CHANNELS.general, "schedule", VIEWS.event);
    const start = future(3, 12);
    const since = h.emulator.calls.length;
    h.sandbox.control.clearLog();
    const res = await h.driver.viewSubmission({
      user: USERS.omar,
      values: {
        [F.title]: "Every other day until",
        [F.start]: new Date(start),
        [F.end]: new Date(start + HOUR),
        [F.timezone]: "Europe/Berlin",
        [F.recurrence]: "DAILY",
        [F.frequency]: "2",
        [F.until]: isoDay(start + 6 * DAY),
      },
    });
    expect(res.outcome.action).toBe("closed");
    await waitFor(h, isMessageTo(USERS.omar, /Scheduled/), since);
    const create = h.sandbox.control
      .log()
      .find((e) => e.method === "POST" && /\/events$/.test(e.path));
    // Days 0, 2, 4 and 6: the series ends when the fourth occurrence does.
    expect(create?.body).toMatchObject({
      recurrencePattern: {
        recurrenceType: "DAILY",
        frequency: "2",
        endDate: start + 6 * DAY + HOUR,
      },
    });
    expect(
      (create?.body as { recurrencePattern?: Record<string, unknown> } | undefined)
        ?.recurrencePattern,
    ).not.toHaveProperty("recurrenceCount");
    const id = (await h.app.store.events.list(TEAM)).find(
      (r) => r.title === "Every other day until",
    )?.eventId;
    const form = await commandOpensModal(
      h,
      USERS.omar,
      CHANNELS.general,
      `edit ${id}`,
      VIEWS.event,
    );
    const blocks = viewOf(form).blocks as Array<{
      block_id?: string;
      element?: Record<string, unknown>;
    }>;
    const el = (b: string) => blocks.find((x) => x.block_id === b)?.element ?? {};
    expect(el(F.until).initial_date).toBe(isoDay(start + 6 * DAY));
    expect((el(F.recurrence).initial_option as { value: string }).value).toBe("DAILY");
    h.sandbox.control.clearLog();
    const s2 = h.emulator.calls.length;
    await h.driver.viewSubmission({
      user: USERS.omar,
      values: { [F.title]: "Every other day, renamed" },
    });
    await waitFor(h, isMessageTo(USERS.omar, /Saved: title\./), s2);
    const put = h.sandbox.control.log().find((e) => e.method === "PUT");
    expect(put?.body).toEqual({ title: "Every other day, renamed" });
  });

  it("previews the next dates in the event's zone, across a daylight-saving change", async () => {
    await commandOpensModal(h, USERS.kei, CHANNELS.general, "schedule", VIEWS.event);
    // Late March: Paris moves from UTC+01:00 to UTC+02:00 on the last Sunday.
    const year = new Date().getUTCFullYear() + 1;
    const since = h.emulator.calls.length;
    await h.driver.blockAction({
      user: USERS.kei,
      action_id: F.timezone,
      selected_option: "Europe/Paris",
    });
    await waitFor(h, (c) => c.method === "views.update", since);
    const s2 = h.emulator.calls.length;
    await h.driver.blockAction({
      user: USERS.kei,
      action_id: F.recurrence,
      selected_option: "DAILY",
    });
    await waitFor(h, (c) => c.method === "views.update", s2);
    const s3 = h.emulator.calls.length;
    await h.driver.blockAction({ user: USERS.kei, action_id: F.count, value: "4" });
    await waitFor(h, (c) => c.method === "views.update", s3);
    const s4 = h.emulator.calls.length;
    await h.driver.blockAction({
      user: USERS.kei,
      action_id: F.start,
      selected_date_time: new Date(Date.UTC(year, 2, 27, 17, 0)),
    });
    const call = await waitFor(h, (c) => c.method === "views.update", s4);
    const preview = JSON.stringify(
      (viewOf(call).blocks as Array<Record<string, unknown>>).find(
        (b) => b.block_id === "ev_preview",
      ),
    );
    // 18:00 local every day, before and after the change.
    expect(preview.match(/18:00 \(UTC\+01:00\)/g)?.length).toBeGreaterThanOrEqual(1);
    expect(preview.match(/18:00 \(UTC\+02:00\)/g)?.length).toBeGreaterThanOrEqual(1);
    expect(preview).not.toMatch(/19:00|17:00/);
    await h.driver.viewClosed({ user: USERS.kei });
  });

  it("the global shortcut opens the same form", async () => {
    const since = h.emulator.calls.length;
    await h.driver.shortcut({ user: USERS.omar, callback_id: "schedule_event" });
    await waitFor(
      h,
      (c) => c.method === "views.update" && viewOf(c).callback_id === VIEWS.event,
      since,
    );
    await h.driver.viewClosed({ user: USERS.omar });
  });

  it("refuses a member the policy leaves out, in plain words", async () => {
    const s = await h.app.store.settings.getOrDefault("T0ONAIR");
    await h.app.store.settings.put("T0ONAIR", {
      ...s,
      policy: { ...s.policy, whoMaySchedule: "admins" },
    });
    try {
      const since = h.emulator.calls.length;
      await h.driver.slashCommand({
        user: USERS.member,
        channel: CHANNELS.general,
        text: "schedule",
      });
      const call = await waitFor(h, (c) => c.method === "views.update", since);
      expect(viewOf(call).callback_id).not.toBe(VIEWS.event);
      expect(JSON.stringify(viewOf(call).blocks)).toContain(
        "only workspace admins may schedule events",
      );
      await h.driver.viewClosed({ user: USERS.member });
    } finally {
      await h.app.store.settings.put("T0ONAIR", s);
    }
  });

  it("an events-service failure on create brings the form back with everything typed and the reason, nothing stored", async () => {
    await commandOpensModal(h, USERS.omar, CHANNELS.general, "schedule", VIEWS.event);
    const before = (await h.app.store.events.list("T0ONAIR")).length;
    h.sandbox.control.addFault({ service: "events", status: 503, times: 20 });
    const since = h.emulator.calls.length;
    const start = future(2);
    try {
      const res = await h.driver.viewSubmission({
        user: USERS.omar,
        values: {
          [F.title]: "Unlucky",
          [F.description]: "Typed with care",
          [F.start]: new Date(start),
          [F.end]: new Date(start + HOUR),
          [F.panelists]: [USERS.kei],
        },
      });
      expect(res.outcome.action).toBe("closed");
      // Back on the submission's own trigger, within its 3 s.
      const back = await waitFor(h, (c) => c.method === "views.open" && c.ok, since);
      const view = viewOf(back);
      expect(view.callback_id).toBe(VIEWS.event);
      const text = JSON.stringify(view.blocks);
      expect(text).toContain("Nothing was saved: The live events service is unavailable");
      expect(text).toContain("press *Schedule* to try again");
      const blocks = (h.emulator.workspace.topView(USERS.omar)?.view.blocks ?? []) as Array<{
        block_id?: string;
        element?: Record<string, unknown>;
      }>;
      const el = (id: string) => blocks.find((b) => b.block_id === id)?.element;
      expect(el(F.title)?.initial_value).toBe("Unlucky");
      expect(el(F.description)?.initial_value).toBe("Typed with care");
      expect(el(F.start)?.initial_date_time).toBe(start / 1000);
      expect(el(F.panelists)?.initial_users).toEqual([USERS.kei]);
      expect((await h.app.store.events.list("T0ONAIR")).length).toBe(before);
    } finally {
      h.sandbox.control.clearFaults();
    }
    // Pressing Schedule again, with the service back, schedules it.
    const again = h.emulator.calls.length;
    const res = await h.driver.viewSubmission({ user: USERS.omar });
    expect(res.outcome.action).toBe("closed");
    await waitFor(h, isMessageTo(USERS.omar, /Scheduled/), again);
    expect((await h.app.store.events.list("T0ONAIR")).length).toBe(before + 1);
  });

  it("opens the modal before the slow upstream work (a grant delayed upstream)", async () => {
    // Ada has never been linked here: opening the form grants her a user token upstream.
    h.sandbox.control.addFault({ service: "events", delayMs: 1500, times: 1 });
    const since = h.emulator.calls.length;
    await h.driver.slashCommand({ user: USERS.admin, channel: CHANNELS.general, text: "schedule" });
    const open = await waitFor(h, (c) => c.method === "views.open", since);
    expect(open.ok).toBe(true);
    // The placeholder is up while the grant is still held upstream.
    expect(h.emulator.calls.slice(since).some((c) => c.method === "views.update")).toBe(false);
    const filled = await waitFor(h, (c) => c.method === "views.update", since);
    expect(viewOf(filled).callback_id).toBe(VIEWS.event);
    h.sandbox.control.clearFaults();
    await h.driver.viewClosed({ user: USERS.admin });
  });

  it("every payload passed Block Kit limits and no secret leaked", () => {
    expectAllPayloadsValid(h);
    const scan = createSecretScanner();
    for (const line of h.logs) scan.add("log", line);
    for (const c of h.emulator.calls) scan.add(`slack ${c.method}`, JSON.stringify(c.args));
    scan.assertNoSecrets([...h.secrets, "sandbox-secret"]);
  });
});
