import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_REMINDERS_MIN } from "../../src/domain/subscription.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { notifyCard, remindersScheduled } from "../helpers/live-card.ts";
import { eventually, seedEvent } from "../helpers/live-fixtures.ts";

/**
 * Slack answering 429 with Retry-After on a busy channel: nothing lost, order kept, the pace
 * honoured, and an interactive modal opened meanwhile still makes its trigger's 3 s.
 */

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

/** The replies under the card at `ts` in #events, one text per line. */
function thread(ts: string): string {
  return h.emulator.workspace
    .replies(CHANNELS.events, ts)
    .filter((m) => m.ts !== ts)
    .map((m) => m.text ?? "")
    .join("\n");
}

/** Waits until every name is in the card's thread. */
async function namesInThread(ts: string, names: readonly string[]): Promise<void> {
  await eventually(
    () => (names.every((n) => thread(ts).includes(n)) ? true : undefined),
    "every name in the thread",
    30_000,
  );
}

/** Waits until the card at `ts` in #events shows `n` now, at peak and unique. */
async function cardShows(ts: string, n: number): Promise<void> {
  await eventually(
    () =>
      JSON.stringify(
        h.emulator.workspace.topLevel(CHANNELS.events).find((m) => m.ts === ts)?.blocks ?? "",
      ).includes(`Attendees now *${n}* · peak *${n}* · unique *${n}*`)
        ? true
        : undefined,
    "the card's final figures",
    15_000,
  );
}

describe("a rate-limited channel", () => {
  it("keeps every notice, in order, honours Retry-After, and never delays a modal", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Busy channel",
    });
    const ts = await notifyCard(h, event, CHANNELS.events, "every");
    const since = h.emulator.calls.length;
    // Slack's pace, and on top a storm of 429s on this channel.
    h.emulator.setRateLimit({
      perChannelPerSec: 1,
      burst: 1,
      methods: ["chat.postMessage", "chat.update"],
    });
    h.emulator.throttle({ channel: CHANNELS.events, times: 4, retryAfterSec: 1 });

    const names: string[] = [];
    const waves = 5;
    for (let w = 1; w <= waves; w++) {
      const join = Array.from({ length: 4 }, (_, i) => ({ name: `Wave${w} Person${i + 1}` }));
      names.push(...join.map((j) => j.name));
      const res = await h.sandbox.control.attendees(event.eventId, { join, concurrency: 1 });
      expect(res.delivered).toBe(4);
      if (w === 2) {
        // An interactive call in the middle of the storm: the modal must open.
        const before = h.emulator.calls.length;
        await h.driver.slashCommand({
          user: USERS.omar,
          channel: CHANNELS.events,
          text: "schedule",
        });
        const open = await h.emulator.waitForCall((c) => c.method === "views.open", {
          since: before,
          timeoutMs: 3_000,
        });
        expect(open.ok, open.error).toBe(true);
      }
    }

    await namesInThread(ts, names);
    const text = thread(ts);
    // Each notice exactly once, in the order they joined.
    const positions = names.map((n) => text.indexOf(n));
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    for (const n of names) expect(text.split(n).length - 1).toBe(1);

    const onChannel = h.emulator.calls
      .slice(since)
      .filter((c) => c.args.channel === CHANNELS.events && c.method.startsWith("chat."));
    const limited = onChannel.filter((c) => c.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    // After each 429 the next call to the channel waited for Retry-After.
    for (const r of limited) {
      const next = onChannel.find((c) => c.seq > r.seq);
      if (next) expect(next.time - r.time).toBeGreaterThanOrEqual(900);
    }
    await cardShows(ts, 20);
    h.emulator.setRateLimit(undefined);
  });

  it("keeps posting through refusals that pass (Slack's limits and hiccups answered as errors)", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Hiccups",
    });
    const ts = await notifyCard(h, event, CHANNELS.events, "every");
    const since = h.emulator.calls.length;
    // Documented for these methods (chat.postMessage: rate_limited; chat.update:
    // message_limit_exceeded) or for every method (internal_error). Before, the first of them
    // stopped the channel's notices for good.
    h.emulator.throttle({
      method: "chat.postMessage",
      channel: CHANNELS.events,
      times: 1,
      retryAfterSec: 0,
      error: "rate_limited",
    });
    h.emulator.throttle({
      method: "chat.postMessage",
      channel: CHANNELS.events,
      times: 1,
      retryAfterSec: 0,
      error: "internal_error",
    });
    h.emulator.throttle({
      method: "chat.update",
      channel: CHANNELS.events,
      times: 1,
      retryAfterSec: 0,
      error: "message_limit_exceeded",
    });
    const names = ["Hic Cup", "Hic Cough", "Hic Sneeze"];
    for (const name of names) {
      await h.sandbox.control.attendees(event.eventId, { join: [{ name }] });
    }
    await namesInThread(ts, names);
    for (const n of names) expect(thread(ts).split(n).length - 1).toBe(1);
    await cardShows(ts, 3);
    const calls = h.emulator.calls.slice(since);
    const errors = calls.filter((c) => c.args.channel === CHANNELS.events && c.error);
    expect(errors.map((c) => c.error).sort()).toEqual([
      "internal_error",
      "message_limit_exceeded",
      "rate_limited",
    ]);
    // Between a refused post and the next try: a lookup only after internal_error
    // (Slack says part of the call may have happened), none after rate_limited (nothing did).
    const lookupsAfter = (error: string) => {
      const refused = calls.find((c) => c.error === error);
      if (!refused) throw new Error(`no ${error}`);
      const next = calls.find((c) => c.seq > refused.seq && c.method === "chat.postMessage");
      return calls.filter(
        (c) =>
          c.seq > refused.seq &&
          c.seq < (next?.seq ?? Number.POSITIVE_INFINITY) &&
          (c.method === "conversations.replies" || c.method === "conversations.history"),
      ).length;
    };
    expect(lookupsAfter("internal_error")).toBeGreaterThan(0);
    expect(lookupsAfter("rate_limited")).toBe(0);
  });

  it("a channel that takes replies only: the card is refused once, and the organizer told why", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Threads only",
    });
    const townHall = h.emulator.workspace.resolveChannel(CHANNELS.townHall);
    if (!townHall) throw new Error("no town-hall channel");
    townHall.posting = "thread_only";
    try {
      const since = h.emulator.calls.length;
      await h.driver.slashCommand({
        user: USERS.omar,
        channel: CHANNELS.townHall,
        text: `notify ${event.eventId}`,
      });
      const dm = await h.emulator.waitForCall(
        (c) =>
          c.method === "chat.postMessage" &&
          c.args.channel === USERS.omar &&
          String(c.args.text).includes("Threads only"),
        { since, timeoutMs: 10_000 },
      );
      expect(String(dm.args.text)).toContain("takes replies in threads only");
      await h.sandbox.control.attendees(event.eventId, { join: [{ name: "Still Here" }] });
      await new Promise((r) => setTimeout(r, 2_000));
      const refused = h.emulator.calls
        .slice(since)
        .filter(
          (c) => c.args.channel === CHANNELS.townHall && c.method.startsWith("chat.") && !c.ok,
        );
      expect(refused.map((c) => c.error)).toEqual(["restricted_action_thread_only_channel"]);
    } finally {
      townHall.posting = undefined;
    }
  });

  it("stops posting to a channel that refuses the app, and resumes when notified again", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Archived channel",
    });
    const cardIn = (channel: string) =>
      eventually(
        () =>
          h.emulator.workspace
            .topLevel(channel)
            .find((m) => JSON.stringify(m.blocks ?? "").includes("Archived channel"))?.ts,
        `the card in ${channel}`,
      );
    for (const ch of [CHANNELS.general, CHANNELS.townHall]) {
      await h.driver.slashCommand({
        user: USERS.omar,
        channel: ch,
        text: `notify ${event.eventId}`,
      });
    }
    await cardIn(CHANNELS.general);
    const townTs = await cardIn(CHANNELS.townHall);
    const general = h.emulator.workspace.resolveChannel(CHANNELS.general);
    if (!general) throw new Error("no general channel");
    general.is_archived = true;
    const since = h.emulator.calls.length;
    await h.sandbox.control.attendees(event.eventId, { join: [{ name: "Still Counted" }] });
    await eventually(
      () =>
        h.emulator.workspace
          .replies(CHANNELS.townHall, townTs)
          .some((m) => (m.text ?? "").includes("Still Counted"))
          ? true
          : undefined,
      "the digest in the channel that accepts posts",
    );
    await new Promise((r) => setTimeout(r, 2_500));
    const refused = h.emulator.calls
      .slice(since)
      .filter((c) => c.args.channel === CHANNELS.general && c.method.startsWith("chat."));
    // One refusal, then silence: no retry loop against a channel that will keep saying no.
    expect(refused.map((c) => c.error)).toEqual(["is_archived"]);
    // The organizer hears of it once, in words, with the way back.
    const told = h.emulator.calls
      .slice(since)
      .filter((c) => c.method === "chat.postMessage" && c.args.channel === USERS.omar);
    expect(told.map((c) => String(c.args.text))).toEqual([
      expect.stringMatching(
        new RegExp(
          `<#${CHANNELS.general}> stopped getting the live card of \\*Archived channel\\*: the channel is archived\\. .*\`/onair notify ${event.eventId}\``,
        ),
      ),
    ]);
    // Shown as written: the title is outside text (a URL in it would stay text).
    const shown = told[0]?.args.blocks as Array<{
      text?: { text?: string; verbatim?: boolean };
    }>;
    expect(shown[0]?.text).toMatchObject({ text: told[0]?.args.text, verbatim: true });

    general.is_archived = false;
    await h.driver.slashCommand({
      user: USERS.omar,
      channel: CHANNELS.general,
      text: `notify ${event.eventId}`,
    });
    await eventually(
      () =>
        h.emulator.calls.some(
          (c) =>
            c.seq > since &&
            c.args.channel === CHANNELS.general &&
            c.ok &&
            c.method === "chat.update",
        )
          ? true
          : undefined,
      "posts again after notify",
    );
  });

  it("tells the organizer when the card's own update is refused in an archived channel (is_inactive)", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Archived under the card",
    });
    const notified = h.emulator.calls.length;
    const ts = await notifyCard(h, event, CHANNELS.townHall);
    const town = h.emulator.workspace.resolveChannel(CHANNELS.townHall);
    if (!town) throw new Error("no town-hall channel");
    // Archived only once the event's reminders are scheduled there (else a reminder would be
    // the call refused, not the update).
    await remindersScheduled(
      h,
      CHANNELS.townHall,
      event.title,
      notified,
      DEFAULT_REMINDERS_MIN.length,
    );
    const since = h.emulator.calls.length;
    town.is_archived = true;
    try {
      // A state change: only the card is updated, and chat.update says is_inactive.
      await h.sandbox.control.setState(event.eventId, { state: "IN_EVENT" });
      const dm = await h.emulator.waitForCall(
        (c) =>
          c.method === "chat.postMessage" &&
          c.args.channel === USERS.omar &&
          String(c.args.text).includes("Archived under the card"),
        { since, timeoutMs: 10_000 },
      );
      expect(String(dm.args.text)).toContain("the channel is archived");
      // (Other events' posts to the channel are refused too; this card's update is the one.)
      const updates = h.emulator.calls
        .slice(since)
        .filter((c) => c.method === "chat.update" && c.args.ts === ts);
      expect(updates.map((c) => c.error)).toEqual(["is_inactive"]);
    } finally {
      town.is_archived = false;
    }
  });

  it("a locked thread stops the thread's posts only: the card goes on, the organizer is told", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Locked thread",
    });
    const ts = await notifyCard(h, event, CHANNELS.events, "every");
    const ws = h.emulator.workspace;
    const events = ws.resolveChannel(CHANNELS.events);
    if (!events) throw new Error("no events channel");
    ws.findMessage(events, ts)!.thread_locked = true;
    const since = h.emulator.calls.length;
    await h.sandbox.control.setState(event.eventId, { state: "IN_EVENT" });
    await h.sandbox.control.attendees(event.eventId, { join: [{ name: "Locked Out" }] });
    const dm = await h.emulator.waitForCall(
      (c) =>
        c.method === "chat.postMessage" &&
        c.args.channel === USERS.omar &&
        String(c.args.text).includes("Locked thread"),
      { since, timeoutMs: 10_000 },
    );
    expect(String(dm.args.text)).toContain("stays up to date, but its thread stopped");
    expect(String(dm.args.text)).toContain("an admin locked the live card's thread");
    // The card still follows: a second join reaches it.
    await h.sandbox.control.attendees(event.eventId, { join: [{ name: "Second Try" }] });
    await cardShows(ts, 2);
    await new Promise((r) => setTimeout(r, 1_500));
    const threadPosts = h.emulator.calls
      .slice(since)
      .filter((c) => c.method === "chat.postMessage" && c.args.thread_ts === ts);
    // One refusal, then no more tries at the thread (and no loop against it).
    expect(threadPosts.map((c) => c.error)).toEqual(["restricted_action_thread_locked"]);
  });
});
