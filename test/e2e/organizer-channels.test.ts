import { validateBlocks, validateView } from "@onair/slack-emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_REMINDERS } from "../../src/domain/event-draft.ts";
import { CARD_ACTIONS, EVENT_FIELDS as F, NOTIFY_FIELDS, VIEWS } from "../../src/ids.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { remindersScheduled } from "../helpers/live-card.ts";
import {
  commandOpensModal,
  future,
  HOUR,
  isMessageTo,
  scheduleViaForm,
  viewOf,
  waitFor,
} from "./organizer-helpers.ts";

/**
 * A private channel the app was not invited to cannot get the live card: the form says so under
 * the channel field, with what to do, instead of "Scheduled, its card goes there" and a DM later.
 */

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const creates = () =>
  h.sandbox.control.log().filter((e) => e.method === "POST" && /\/events$/.test(e.path));

function planning() {
  const ch = h.emulator.workspace.channels.get(CHANNELS.planning);
  if (!ch) throw new Error("no #planning");
  return ch;
}

describe("the schedule form's channel", () => {
  it("a private channel without the app: an inline error naming the invite, nothing created", async () => {
    // Omar is in #planning and types the command there: he may send notices to it.
    await commandOpensModal(h, USERS.omar, CHANNELS.planning, "schedule", VIEWS.event);
    const before = creates().length;
    const start = future(4);
    const values = {
      [F.title]: "Planning sync",
      [F.start]: new Date(start),
      [F.end]: new Date(start + HOUR),
      [F.channel]: CHANNELS.planning,
    } as never;
    const res = await h.driver.viewSubmission({ user: USERS.omar, values });
    expect(res.outcome.action).toBe("errors");
    const errors = (res.body as { errors: Record<string, string> }).errors;
    expect(Object.keys(errors)).toEqual([F.channel]);
    expect(errors[F.channel]).toMatch(/Invite @On Air to it first/);
    expect(errors[F.channel]).not.toMatch(/<#/);
    expect(creates().length).toBe(before);

    // Invited, the same form goes through and the card goes there.
    planning().members.add(h.emulator.workspace.app.botUserId);
    try {
      const since = h.emulator.calls.length;
      const ok = await h.driver.viewSubmission({ user: USERS.omar, values });
      expect(ok.outcome.action).toBe("closed");
      const done = await waitFor(h, isMessageTo(USERS.omar, /Scheduled/), since);
      expect(JSON.stringify(done.args)).toContain(`Its live card goes to <#${CHANNELS.planning}>`);
      await waitFor(
        h,
        (c) =>
          c.method === "chat.postMessage" &&
          c.args.channel === CHANNELS.planning &&
          JSON.stringify(c.args.blocks ?? "").includes("Planning sync"),
        since,
        10_000,
      );
      // The app is let out of the channel only once the reminders are scheduled there (else
      // the later one is refused, and counted below).
      await remindersScheduled(
        h,
        CHANNELS.planning,
        "Planning sync",
        since,
        DEFAULT_REMINDERS.length,
      );
      expect(creates().length).toBe(before + 1);
    } finally {
      planning().members.delete(h.emulator.workspace.app.botUserId);
    }
  });

  it("an archived channel: said inline too", async () => {
    const ch = h.emulator.workspace.channels.get(CHANNELS.townHall);
    if (!ch) throw new Error("no #town-hall");
    await commandOpensModal(h, USERS.omar, CHANNELS.townHall, "schedule", VIEWS.event);
    ch.is_archived = true;
    try {
      const start = future(4);
      const res = await h.driver.viewSubmission({
        user: USERS.omar,
        values: {
          [F.title]: "Archived sync",
          [F.start]: new Date(start),
          [F.end]: new Date(start + HOUR),
          [F.channel]: CHANNELS.townHall,
        } as never,
      });
      expect(res.outcome.action).toBe("errors");
      expect((res.body as { errors: Record<string, string> }).errors[F.channel]).toMatch(
        /archived/,
      );
    } finally {
      ch.is_archived = false;
    }
  });
});

describe("notify into a private channel without the app", () => {
  it("the command says how to invite it, and subscribes nothing", async () => {
    const id = await scheduleViaForm(h, USERS.omar, CHANNELS.general, "Hidden notify", future(5));
    const since = h.emulator.calls.length;
    await h.driver.slashCommand({
      user: USERS.omar,
      channel: CHANNELS.planning,
      text: `notify ${id}`,
    });
    const said = await waitFor(h, (c) => c.method === "response_url", since);
    expect(String(said.args.text)).toMatch(/Invite @On Air to it first/);
    expect(await h.app.store.subscriptions.forEvent(TEAM, id)).toEqual([]);
  });

  it("the card's Notify form says it under the channel field", async () => {
    const since0 = h.emulator.calls.length;
    await scheduleViaForm(h, USERS.kei, CHANNELS.general, "Hidden form notify", future(6), {
      [F.channel]: CHANNELS.events,
    });
    const card = await waitFor(
      h,
      (c) =>
        c.method === "chat.postMessage" &&
        c.args.channel === CHANNELS.events &&
        JSON.stringify(c.args.blocks ?? "").includes("Hidden form notify"),
      since0,
      10_000,
    );
    const opened = h.emulator.calls.length;
    await h.driver.blockAction({
      user: USERS.kei,
      channel: CHANNELS.events,
      message_ts: String((card.response as { ts?: string } | undefined)?.ts),
      action_id: CARD_ACTIONS.notify,
    });
    await waitFor(
      h,
      (c) => c.method === "views.update" && viewOf(c).callback_id === VIEWS.notify,
      opened,
    );
    const res = await h.driver.viewSubmission({
      user: USERS.kei,
      values: { [NOTIFY_FIELDS.channel]: CHANNELS.planning } as never,
    });
    expect(res.outcome.action).toBe("errors");
    expect((res.body as { errors: Record<string, string> }).errors[NOTIFY_FIELDS.channel]).toMatch(
      /Invite @On Air to it first/,
    );
    await h.driver.viewClosed({ user: USERS.kei });
  });

  it("every payload passed Block Kit limits; only looks at #planning were refused", () => {
    const refused = h.emulator.calls.filter((c) => !c.ok);
    expect(refused.length).toBeGreaterThan(0);
    for (const c of refused) {
      // The join a notify tries (best effort, src/domain/subscriptions.ts) is refused in a
      // private channel even once the app is in it.
      expect([
        "conversations.info channel_not_found",
        "conversations.join method_not_supported_for_channel_type",
      ]).toContain(`${c.method} ${c.error}`);
      expect(c.args.channel).toBe(CHANNELS.planning);
    }
    const rest = h.emulator.calls.filter((c) => c.ok);
    for (const c of rest) {
      if (c.method.startsWith("views.")) {
        expect(validateView(c.args.view).messages, `${c.method} #${c.seq}`).toEqual([]);
      } else if (c.args.blocks !== undefined) {
        expect(validateBlocks(c.args.blocks).messages, `${c.method} #${c.seq}`).toEqual([]);
      }
    }
  });
});
