import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CallRecord, DriverResult } from "@onair/slack-emulator";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type OnAirApp, startApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import {
  CANCEL_ACTIONS,
  CARD_ACTIONS,
  EVENT_FIELDS as F,
  NOTIFY_FIELDS,
  SETTINGS_FIELDS,
  SETTINGS_VIEW,
  TOKEN_FIELDS as T,
  VIEWS,
} from "../../src/ids.ts";
import { REPEATED_MINT_TEXT } from "../../src/slack/views/token-form.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { type Balancer, startBalancer } from "../helpers/live-stage.ts";
import {
  commandOpensModal,
  expectAllPayloadsValid,
  future,
  HOUR,
  isMessageTo,
  scheduleViaForm,
  viewOf,
  waitFor,
} from "./organizer-helpers.ts";

/**
 * A view submitted twice (a double click, or Slack's client sending it again on a flaky network)
 * is acted on once: the repeat, one after the other or at the same moment, is answered as the
 * first was and creates, mints, cancels or saves nothing.
 */

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

/** Sends the very request Slack sent before, again (what a client's resend is). */
function resend(first: DriverResult) {
  return h.driver.send(
    new URLSearchParams({ payload: JSON.stringify(first.payload) }).toString(),
    "application/x-www-form-urlencoded",
  );
}

const creates = () =>
  h.sandbox.control.log().filter((e) => e.method === "POST" && /\/events$/.test(e.path));
const callsSince = (since: number, match: (c: CallRecord) => boolean) =>
  h.emulator.calls.slice(since).filter(match);

/** Waits until the channel holds the event's card and both reminders (the engine's work). */
async function cardAndReminders(channel: string, title: string, since: number) {
  await vi.waitFor(
    () => {
      const cards = callsSince(
        since,
        (c) =>
          c.method === "chat.postMessage" &&
          c.args.channel === channel &&
          JSON.stringify(c.args.blocks ?? "").includes(title),
      );
      expect(cards.length).toBeGreaterThanOrEqual(1);
      const reminders = callsSince(
        since,
        (c) => c.method === "chat.scheduleMessage" && c.args.channel === channel && c.ok,
      );
      expect(reminders.length).toBeGreaterThanOrEqual(2);
    },
    { timeout: 10_000 },
  );
}

function scheduleValues(title: string, channel: string) {
  const start = future(5);
  return {
    [F.title]: title,
    [F.start]: new Date(start),
    [F.end]: new Date(start + HOUR),
    [F.channel]: channel,
    [F.reminders]: ["60", "10"],
  } as never;
}

describe("the schedule form submitted twice", () => {
  it("one after the other: one event upstream, one card, one set of reminders", async () => {
    await commandOpensModal(h, USERS.omar, CHANNELS.events, "schedule", VIEWS.event);
    const since = h.emulator.calls.length;
    const before = creates().length;
    const first = await h.driver.viewSubmission({
      user: USERS.omar,
      values: scheduleValues("Resent webinar", CHANNELS.events),
    });
    expect(first.outcome.action).toBe("closed");
    const again = await resend(first);
    // Answered as the first was: an empty 200, which closes the modal.
    expect(again.status).toBe(200);
    expect(again.body).toBe(first.body);
    await waitFor(h, isMessageTo(USERS.omar, /Scheduled/), since);
    await cardAndReminders(CHANNELS.events, "Resent webinar", since);
    expect(creates().length - before).toBe(1);
    const stored = (await h.app.store.events.list(TEAM)).filter(
      (r) => r.title === "Resent webinar",
    );
    expect(stored).toHaveLength(1);
    expect(callsSince(since, isMessageTo(USERS.omar, /Scheduled/))).toHaveLength(1);
    expect(
      callsSince(
        since,
        (c) => c.method === "chat.postMessage" && c.args.channel === CHANNELS.events,
      ),
    ).toHaveLength(1);
    expect(callsSince(since, (c) => c.method === "chat.scheduleMessage" && c.ok)).toHaveLength(2);
  });

  it("at the same moment (a double click): one event, one card, one set of reminders", async () => {
    await commandOpensModal(h, USERS.kei, CHANNELS.townHall, "schedule", VIEWS.event);
    const since = h.emulator.calls.length;
    const before = creates().length;
    const values = scheduleValues("Double-clicked webinar", CHANNELS.townHall);
    const [a, b] = await Promise.all([
      h.driver.viewSubmission({ user: USERS.kei, values }),
      h.driver.viewSubmission({ user: USERS.kei, values }),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect([a.body, b.body]).toEqual(["", ""]);
    await waitFor(h, isMessageTo(USERS.kei, /Scheduled/), since);
    await cardAndReminders(CHANNELS.townHall, "Double-clicked webinar", since);
    expect(creates().length - before).toBe(1);
    expect(
      (await h.app.store.events.list(TEAM)).filter((r) => r.title === "Double-clicked webinar"),
    ).toHaveLength(1);
    expect(callsSince(since, isMessageTo(USERS.kei, /Scheduled/))).toHaveLength(1);
    expect(
      callsSince(
        since,
        (c) => c.method === "chat.postMessage" && c.args.channel === CHANNELS.townHall,
      ),
    ).toHaveLength(1);
    expect(callsSince(since, (c) => c.method === "chat.scheduleMessage" && c.ok)).toHaveLength(2);
  });

  it("a changed form (new hash) is a new submission: inline errors, then a fix, schedule once", async () => {
    await commandOpensModal(h, USERS.omar, CHANNELS.general, "schedule", VIEWS.event);
    const before = creates().length;
    const bad = await h.driver.viewSubmission({
      user: USERS.omar,
      values: { [F.title]: "" } as never,
      clientValidation: false,
    });
    expect(bad.outcome.action).toBe("errors");
    const since = h.emulator.calls.length;
    const start = future(6);
    const ok = await h.driver.viewSubmission({
      user: USERS.omar,
      values: {
        [F.title]: "Fixed webinar",
        [F.start]: new Date(start),
        [F.end]: new Date(start + HOUR),
      } as never,
    });
    expect(ok.outcome.action).toBe("closed");
    await waitFor(h, isMessageTo(USERS.omar, /Scheduled/), since);
    expect(creates().length - before).toBe(1);
  });
});

describe("a store that cannot record the submission", () => {
  it("answers under a field, creates nothing, and the next press goes through", async () => {
    await commandOpensModal(h, USERS.omar, CHANNELS.general, "schedule", VIEWS.event);
    const before = creates().length;
    const store = h.app.deps.store;
    const claim = store.claimOnce.bind(store);
    store.claimOnce = async () => {
      throw new Error("store down");
    };
    const values = scheduleValues("Unrecorded webinar", CHANNELS.general);
    try {
      const res = await h.driver.viewSubmission({ user: USERS.omar, values });
      expect(res.outcome.action).toBe("errors");
      expect((res.body as { errors: Record<string, string> }).errors[F.title]).toMatch(
        /could not record this just now, so nothing was done/,
      );
    } finally {
      store.claimOnce = claim;
    }
    const since = h.emulator.calls.length;
    const ok = await h.driver.viewSubmission({ user: USERS.omar, values });
    expect(ok.outcome.action).toBe("closed");
    await waitFor(h, isMessageTo(USERS.omar, /Scheduled/), since);
    expect(creates().length - before).toBe(1);
  });
});

describe("the edit form submitted twice", () => {
  it("sends one change upstream and says Saved once", async () => {
    const id = await scheduleViaForm(h, USERS.omar, CHANNELS.general, "Edited twice", future(7));
    await commandOpensModal(h, USERS.omar, CHANNELS.general, `edit ${id}`, VIEWS.event);
    h.sandbox.control.clearLog();
    const since = h.emulator.calls.length;
    const values = { [F.title]: "Edited twice, renamed" } as never;
    const [a, b] = await Promise.all([
      h.driver.viewSubmission({ user: USERS.omar, values }),
      h.driver.viewSubmission({ user: USERS.omar, values }),
    ]);
    await resend(a);
    expect([a.body, b.body]).toEqual(["", ""]);
    await waitFor(h, isMessageTo(USERS.omar, /Saved: title/), since);
    const puts = () =>
      h.sandbox.control.log().filter((e) => e.method === "PUT" && e.path.endsWith(`/events/${id}`));
    expect(puts()).toHaveLength(1);
    expect(callsSince(since, isMessageTo(USERS.omar, /Saved: title|Nothing changed/))).toHaveLength(
      1,
    );
  });
});

describe("the cancel confirmation's yes pressed twice", () => {
  it("deletes once and says Cancelled once", async () => {
    const id = await scheduleViaForm(h, USERS.kei, CHANNELS.general, "Cancelled twice", future(8));
    await commandOpensModal(h, USERS.kei, CHANNELS.general, `cancel ${id}`, VIEWS.cancel);
    h.sandbox.control.clearLog();
    const since = h.emulator.calls.length;
    const [a] = await Promise.all([
      h.driver.blockAction({ user: USERS.kei, action_id: CANCEL_ACTIONS.yes }),
      h.driver.blockAction({ user: USERS.kei, action_id: CANCEL_ACTIONS.yes }),
    ]);
    await resend(a);
    await waitFor(h, isMessageTo(USERS.kei, /Cancelled/), since);
    await waitFor(
      h,
      (c) => c.method === "views.update" && JSON.stringify(viewOf(c)).includes("Cancelled"),
      since,
    );
    expect(
      h.sandbox.control
        .log()
        .filter((e) => e.method === "DELETE" && e.path.endsWith(`/events/${id}`)),
    ).toHaveLength(1);
    // The repeat neither cancels again nor tells of a failure (an event "already cancelled").
    expect(callsSince(since, isMessageTo(USERS.kei, /./))).toHaveLength(1);
    expect(
      callsSince(
        since,
        (c) => c.method === "views.update" && /Cancel/.test(JSON.stringify(c.args)),
      ),
    ).toHaveLength(1);
  });
});

describe("the notify form submitted twice", () => {
  it("notifies once", async () => {
    const since0 = h.emulator.calls.length;
    await scheduleViaForm(h, USERS.omar, CHANNELS.general, "Notified twice", future(9), {
      [F.channel]: CHANNELS.events,
    });
    // The form comes from the card's Notify button.
    const card = await waitFor(
      h,
      (c) =>
        c.method === "chat.postMessage" &&
        c.args.channel === CHANNELS.events &&
        JSON.stringify(c.args.blocks ?? "").includes("Notified twice"),
      since0,
    );
    const ts = String((card.response as { ts?: string } | undefined)?.ts);
    const opened = h.emulator.calls.length;
    await h.driver.blockAction({
      user: USERS.omar,
      channel: CHANNELS.events,
      message_ts: ts,
      action_id: CARD_ACTIONS.notify,
    });
    await waitFor(
      h,
      (c) => c.method === "views.update" && viewOf(c).callback_id === VIEWS.notify,
      opened,
    );
    const since = h.emulator.calls.length;
    const values = { [NOTIFY_FIELDS.channel]: CHANNELS.townHall } as never;
    const [a, b] = await Promise.all([
      h.driver.viewSubmission({ user: USERS.omar, values }),
      h.driver.viewSubmission({ user: USERS.omar, values }),
    ]);
    await resend(a);
    expect([a.body, b.body]).toEqual(["", ""]);
    await waitFor(h, isMessageTo(USERS.omar, /now gets the live card/), since);
    await vi.waitFor(
      () =>
        expect(
          callsSince(
            since,
            (c) => c.method === "chat.postMessage" && c.args.channel === CHANNELS.townHall,
          ).length,
        ).toBeGreaterThanOrEqual(1),
      { timeout: 10_000 },
    );
    expect(callsSince(since, isMessageTo(USERS.omar, /now gets the live card/))).toHaveLength(1);
  });
});

describe("the token form submitted twice", () => {
  const isTokenModal = (c: CallRecord) =>
    c.method === "views.update" && JSON.stringify(c.args.view).includes("Here is your relay token");

  it("mints one token, shown once; the repeat shows none and leaves the token's window alone", async () => {
    await commandOpensModal(h, USERS.admin, CHANNELS.general, "token", VIEWS.token);
    h.sandbox.control.clearLog();
    const since = h.emulator.calls.length;
    const values = { [T.duration]: "day", [T.clientName]: "Twice kiosk" } as never;
    const [a, b] = await Promise.all([
      h.driver.viewSubmission({ user: USERS.admin, values }),
      h.driver.viewSubmission({ user: USERS.admin, values }),
    ]);
    const shown = await waitFor(h, isTokenModal, since);
    const again = await resend(a);
    const token = /```([^`]+)```/.exec(JSON.stringify(viewOf(shown).blocks))?.[1] ?? "";
    expect(token.length).toBeGreaterThan(8);
    const mints = h.sandbox.control
      .log()
      .filter((e) => e.service === "relay" && e.method === "POST");
    expect(mints).toHaveLength(1);
    // One answer set the "Minting…" window, every repeat pushed a notice above it: the window
    // holding the token is never replaced.
    const answers = [a, b, again].map(
      (r) => (r.body as { response_action?: string }).response_action,
    );
    expect(answers.sort()).toEqual(["push", "push", "update"]);
    for (const r of [a, b, again]) {
      const body = JSON.stringify(r.body);
      expect(body).not.toContain(token);
      if (body.includes('"push"')) expect(body).toContain(REPEATED_MINT_TEXT.slice(0, 40));
    }
    expect(callsSince(since, isTokenModal)).toHaveLength(1);
    const carrying = callsSince(since, (c) => JSON.stringify(c.args).includes(token));
    expect(carrying).toHaveLength(1);
    // The person closes the notice and is back on the token.
    const top = h.emulator.workspace.topView(USERS.admin);
    expect(JSON.stringify(top?.view.blocks)).toContain("reached On Air twice");
    await h.driver.viewClosed({ user: USERS.admin });
    const under = h.emulator.workspace.topView(USERS.admin);
    expect(JSON.stringify(under?.view.blocks)).toContain(token);
    await h.driver.viewClosed({ user: USERS.admin });
  });
});

describe("the settings form submitted twice", () => {
  it("writes the settings once and audits once", async () => {
    const since0 = h.emulator.calls.length;
    await h.driver.slashCommand({ user: USERS.admin, channel: CHANNELS.general, text: "settings" });
    await waitFor(
      h,
      (c) => c.method === "views.update" && viewOf(c).callback_id === SETTINGS_VIEW,
      since0,
    );
    const auditsBefore = (await h.app.store.audit.list(TEAM)).filter(
      (a) => a.entry.action === "settings.update",
    ).length;
    const since = h.emulator.calls.length;
    const values = { [SETTINGS_FIELDS.longestToken]: "3d" } as never;
    const [a, b] = await Promise.all([
      h.driver.viewSubmission({ user: USERS.admin, values }),
      h.driver.viewSubmission({ user: USERS.admin, values }),
    ]);
    await resend(a);
    expect([a.body, b.body]).toEqual(["", ""]);
    await waitFor(h, isMessageTo(USERS.admin, /settings are saved/), since);
    expect((await h.app.store.settings.get(TEAM))?.longestTokenMs).toBe(3 * 24 * HOUR);
    const audits = (await h.app.store.audit.list(TEAM)).filter(
      (x) => x.entry.action === "settings.update",
    );
    expect(audits.length - auditsBefore).toBe(1);
    expect(callsSince(since, isMessageTo(USERS.admin, /settings are saved/))).toHaveLength(1);
  });
});

describe("payloads", () => {
  it("every payload passed Block Kit limits", () => {
    expectAllPayloadsValid(h);
  });
});

const REDIS = process.env.TEST_REDIS_URL;
const required = process.env.ONAIR_REQUIRE_SERVICES === "1";

describe.skipIf(!REDIS && !required)(
  "two instances on one Redis, a submission reaching each",
  () => {
    let r: Harness;
    let second: OnAirApp;
    let balancer: Balancer;
    beforeAll(async () => {
      if (!REDIS) throw new Error("TEST_REDIS_URL is required (ONAIR_REQUIRE_SERVICES=1)");
      const namespace = `repeats-${randomUUID().slice(0, 8)}`;
      r = await startHarness({ storeUrl: REDIS, storeNamespace: namespace });
      // Both instances speak to the first one's sandbox, with the credentials stored as an admin
      // would store them (only an instance serving the sandbox itself fills them in).
      const s = await r.app.store.settings.getOrDefault(TEAM);
      await r.app.store.settings.put(TEAM, {
        ...s,
        eventsAppKey: "sandbox-key",
        eventsAppSecret: "sandbox-secret",
        relayUsername: "sandbox",
        relayPassword: "sandbox",
      });
      const [signingSecret, botToken, , encryptionKey] = r.secrets;
      const dir = mkdtempSync(join(tmpdir(), "onair-second-"));
      second = await startApp({
        config: loadConfig({
          PORT: "0",
          SLACK_SIGNING_SECRET: signingSecret ?? "",
          SLACK_API_URL: r.emulator.apiUrl,
          SLACK_BOT_TOKEN: botToken ?? "",
          STORE_URL: REDIS,
          ONAIR_ENCRYPTION_KEY: encryptionKey ?? "",
          RELAY_BASE_URL: `${r.app.origin}/_sandbox/relay`,
          EVENTS_BASE_URL: `${r.app.origin}/_sandbox/events`,
          PUBLIC_URL: r.app.origin,
          LOG_LEVEL: "silent",
        }),
        retryPolicy: "fast",
        host: "127.0.0.1",
        dataDir: dir,
        storeNamespace: namespace,
      });
      const port = (origin: string) => Number(new URL(origin).port);
      balancer = await startBalancer([port(r.app.origin), port(second.origin)], {
        failover: false,
      });
      r.emulator.setAppUrl(balancer.url);
    }, 30_000);
    afterAll(async () => {
      await balancer?.close();
      await second?.close();
      await r?.close();
    });

    it("one event, one card, one set of reminders", async () => {
      await commandOpensModalOn(r, USERS.omar, CHANNELS.events);
      const since = r.emulator.calls.length;
      const start = future(5);
      const values = {
        [F.title]: "Balanced webinar",
        [F.start]: new Date(start),
        [F.end]: new Date(start + HOUR),
        [F.channel]: CHANNELS.events,
        [F.reminders]: ["60", "10"],
      } as never;
      const hitsBefore = [...balancer.hits];
      const [a, b] = await Promise.all([
        r.emulator.driver.viewSubmission({ user: USERS.omar, values }),
        r.emulator.driver.viewSubmission({ user: USERS.omar, values }),
      ]);
      // One went to each instance.
      expect(balancer.hits.map((n, i) => n - (hitsBefore[i] ?? 0))).toEqual([1, 1]);
      expect([a.body, b.body]).toEqual(["", ""]);
      await r.emulator.waitForCall(isMessageTo(USERS.omar, /Scheduled/), {
        since,
        timeoutMs: 10_000,
      });
      await vi.waitFor(
        () => {
          const reminders = r.emulator.calls
            .slice(since)
            .filter((c) => c.method === "chat.scheduleMessage" && c.ok);
          expect(reminders.length).toBeGreaterThanOrEqual(2);
        },
        { timeout: 15_000 },
      );
      const made = r.sandbox.control
        .log()
        .filter((e) => e.method === "POST" && /\/events$/.test(e.path));
      expect(made).toHaveLength(1);
      const after = r.emulator.calls.slice(since);
      expect(after.filter(isMessageTo(USERS.omar, /Scheduled/))).toHaveLength(1);
      expect(
        after.filter((c) => c.method === "chat.postMessage" && c.args.channel === CHANNELS.events),
      ).toHaveLength(1);
      expect(after.filter((c) => c.method === "chat.scheduleMessage" && c.ok)).toHaveLength(2);
    });
  },
);

/** Opens the schedule form through whichever instance the balancer picks. */
async function commandOpensModalOn(hh: Harness, user: string, channel: string) {
  const since = hh.emulator.calls.length;
  // The harness's driver posts to the first instance; the emulator's own, to the balancer.
  await hh.emulator.driver.slashCommand({ user, channel, text: "schedule" });
  return hh.emulator.waitForCall(
    (c) => c.method === "views.update" && viewOf(c).callback_id === VIEWS.event,
    { since, timeoutMs: 5_000 },
  );
}
