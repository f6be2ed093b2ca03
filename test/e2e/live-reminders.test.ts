import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { onEventCancelled, onEventEdited } from "../../src/domain/event-lifecycle.ts";
import { patchRecord } from "../../src/domain/event-record.ts";
import { reconcileEvents } from "../../src/domain/reconcile.ts";
import { SANDBOX_SEEDS } from "../../src/sandbox/index.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { eventually, seedEvent } from "../helpers/live-fixtures.ts";

/** Reminders before the start: scheduled in Slack on notify, moved on edit, deleted on cancel. */

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

function scheduledIn(channel: string) {
  return [...h.emulator.workspace.scheduled.values()]
    .filter((s) => s.channel === channel)
    .sort((a, b) => a.post_at - b.post_at);
}

/** An event starting in `hours`, notified in #general, once both its reminders are scheduled. */
async function notifiedInGeneral(title: string, hours: number) {
  const event = await seedEvent(h.app.deps, {
    team: TEAM,
    organizer: USERS.omar,
    title,
    startInMs: hours * 3600_000,
  });
  await h.driver.slashCommand({
    user: USERS.omar,
    channel: CHANNELS.general,
    text: `notify ${event.eventId}`,
  });
  const mine = () => scheduledIn(CHANNELS.general).filter((s) => s.text.includes(title));
  await eventually(() => (mine().length === 2 ? true : undefined), "both reminders");
  return { event, mine };
}

describe("reminders", () => {
  it("are scheduled 1 h and 10 min before the start, moved on edit and deleted on cancel", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Reminded webinar",
      startInMs: 3 * 3600_000,
    });
    await h.driver.slashCommand({
      user: USERS.omar,
      channel: CHANNELS.townHall,
      text: `notify ${event.eventId}`,
    });
    const first = await eventually(
      () =>
        scheduledIn(CHANNELS.townHall).length === 2 ? scheduledIn(CHANNELS.townHall) : undefined,
      "two scheduled reminders",
    );
    // The bot was not in #town-hall; notify made it join (so it can read its posts back).
    const bot = h.emulator.workspace.app.botUserId;
    expect(h.emulator.workspace.resolveChannel(CHANNELS.townHall)?.members.has(bot)).toBe(true);
    const deps = h.app.deps;
    const link = await deps.store.users.get(TEAM, USERS.omar);
    if (!link) throw new Error("organizer not linked");
    const t = await deps.tokens.userToken(TEAM, link.email, SANDBOX_SEEDS.events);
    const before = await deps.events.getEvent(t.accessToken, t.userId, event.eventId);
    const startSec = Math.floor(before.start / 1000);
    expect(first.map((s) => startSec - s.post_at)).toEqual([3600, 600]);
    expect(first[0]?.text).toContain("Reminded webinar");
    expect(first[0]?.text).toContain("starts in 1 hour");
    expect(first[0]?.text).toContain(`<!date^${startSec}^`);
    // The card is posted by the live worker after notify answers; wait for it, so the edit
    // below must update it in place (were it still queued, the post would carry the new time).
    await eventually(
      () =>
        h.emulator.calls.some(
          (c) =>
            c.method === "chat.postMessage" &&
            c.args.channel === CHANNELS.townHall &&
            JSON.stringify(c.args.blocks).includes(`<!date^${startSec}^`),
        )
          ? true
          : undefined,
      "the card with the first start",
    );

    // Edit: two hours later. The old reminders go, new ones come.
    const newStart = before.start + 2 * 3600_000;
    await deps.events.editEvent(t.accessToken, t.userId, event.eventId, {
      start: newStart,
      end: newStart + 3600_000,
    });
    await onEventEdited(deps, TEAM, event.eventId);
    // The engine moves them, one call a turn of the channel's pace.
    const moved = await eventually(() => {
      const now = scheduledIn(CHANNELS.townHall);
      const offsets = now.map((s) => Math.floor(newStart / 1000) - s.post_at);
      return offsets.length === 2 && offsets[0] === 3600 && offsets[1] === 600 ? now : undefined;
    }, "the reminders moved");
    expect(moved.length).toBe(2);
    for (const old of first) expect(h.emulator.workspace.scheduled.has(old.id)).toBe(false);
    // The card shows the new time too.
    await eventually(
      () =>
        h.emulator.calls.some(
          (c) =>
            c.method === "chat.update" &&
            c.args.channel === CHANNELS.townHall &&
            JSON.stringify(c.args.blocks).includes(`<!date^${Math.floor(newStart / 1000)}^`),
        )
          ? true
          : undefined,
      "the card with the new start",
    );

    await onEventCancelled(deps, TEAM, event.eventId);
    await eventually(
      () => (scheduledIn(CHANNELS.townHall).length === 0 ? true : undefined),
      "the reminders deleted on cancel",
    );
  });

  it("are deleted in a channel that is muted, and only there", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Muted reminders",
      startInMs: 5 * 3600_000,
    });
    const mine = (ch: string) => scheduledIn(ch).filter((s) => s.text.includes("Muted reminders"));
    for (const channel of [CHANNELS.general, CHANNELS.events]) {
      await h.driver.slashCommand({ user: USERS.omar, channel, text: `notify ${event.eventId}` });
    }
    await eventually(
      () =>
        mine(CHANNELS.general).length === 2 && mine(CHANNELS.events).length === 2
          ? true
          : undefined,
      "reminders in both channels",
    );
    await h.driver.slashCommand({
      user: USERS.omar,
      channel: CHANNELS.events,
      text: `mute ${event.eventId}`,
    });
    await eventually(
      () => (mine(CHANNELS.events).length === 0 ? true : undefined),
      "the muted channel's reminders deleted",
    );
    expect(mine(CHANNELS.general).length).toBe(2);
    // The last channel: the subscription goes, and its reminders with it.
    await h.driver.slashCommand({
      user: USERS.omar,
      channel: CHANNELS.general,
      text: `mute ${event.eventId}`,
    });
    await eventually(
      () => (mine(CHANNELS.general).length === 0 ? true : undefined),
      "the last channel's reminders deleted",
    );
  });

  it("wait out any Retry-After Slack gives, and are scheduled in the end", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Throttled reminders",
      startInMs: 4 * 3600_000,
    });
    h.emulator.throttle({ method: "chat.scheduleMessage", times: 2, retryAfterSec: 3 });
    const since = h.emulator.calls.length;
    await h.driver.slashCommand({
      user: USERS.omar,
      channel: CHANNELS.general,
      text: `notify ${event.eventId}`,
    });
    const mine = () => scheduledIn(CHANNELS.general).filter((s) => s.text.includes("Throttled"));
    await eventually(() => (mine().length === 2 ? true : undefined), "both reminders", 15_000);
    const calls = h.emulator.calls.slice(since).filter((c) => c.method === "chat.scheduleMessage");
    const throttled = calls.filter((c) => c.status === 429);
    expect(throttled.length).toBe(2);
    // Each try after a 429 came no sooner than its Retry-After.
    const first429 = throttled[0]?.time ?? 0;
    const after = calls.filter((c) => c.time > first429 && c.status !== 429);
    expect((after[0]?.time ?? 0) - (throttled.at(-1)?.time ?? 0)).toBeGreaterThanOrEqual(2_900);
    // The card went out without waiting for them.
    const card = h.emulator.calls
      .slice(since)
      .find((c) => c.method === "chat.postMessage" && c.args.channel === CHANNELS.general);
    expect(card && card.time < (after[0]?.time ?? 0)).toBe(true);
  });

  it("adopt one whose answer was lost, though Slack stored its text with the title's URL linked", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Launch day https://launch.example/live",
      startInMs: 6 * 3600_000,
    });
    // The first reminder is scheduled, and its answer lost.
    h.emulator.slow({ method: "chat.scheduleMessage", times: 1, ms: 0, error: "internal_error" });
    const since = h.emulator.calls.length;
    await h.driver.slashCommand({
      user: USERS.omar,
      channel: CHANNELS.events,
      text: `notify ${event.eventId}`,
    });
    const mine = () => scheduledIn(CHANNELS.events).filter((s) => s.text.includes("Launch day"));
    const both = await eventually(
      () => (mine().length === 2 ? mine() : undefined),
      "both reminders",
      20_000,
    );
    // Slack linked the bare URL in what it stored: the text the app sent is not what it lists.
    expect(both[0]?.text).toContain("<https://launch.example/live>");
    const lost = h.emulator.calls
      .slice(since)
      .find((c) => c.method === "chat.scheduleMessage" && c.error === "internal_error");
    expect(lost?.warnings).toContain("took_effect");
    expect(
      h.emulator.calls.slice(since).some((c) => c.method === "chat.scheduledMessages.list" && c.ok),
    ).toBe(true);
    expect(new Set(both.map((s) => s.post_at)).size).toBe(2);
    // Adopted, not orphaned: cancelling deletes every one (an orphan would stay and post).
    await onEventCancelled(h.app.deps, TEAM, event.eventId);
    await eventually(
      () => (mine().length === 0 ? true : undefined),
      "the reminders deleted on cancel",
      20_000,
    );
  });

  it("skip one Slack will not hold (30 already within 5 minutes), and the channel's card goes on", async () => {
    const startsAt = Date.now() + 7 * 3600_000;
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Crowded hour",
      startInMs: 7 * 3600_000,
    });
    // Thirty other messages already scheduled in the channel around the 10-minute reminder.
    const ws = h.emulator.workspace;
    const ch = ws.resolveChannel(CHANNELS.townHall)!;
    const tenBefore = Math.floor((startsAt - 10 * 60_000) / 1000);
    const others = Array.from({ length: 30 }, (_, i) =>
      ws.scheduleMessage(ch, ws.app.botUserId, tenBefore - 120 + i * 8, { text: `other ${i}` }),
    );
    try {
      const since = h.emulator.calls.length;
      await h.driver.slashCommand({
        user: USERS.omar,
        channel: CHANNELS.townHall,
        text: `notify ${event.eventId}`,
      });
      const mine = () =>
        scheduledIn(CHANNELS.townHall).filter((s) => s.text.includes("Crowded hour"));
      await eventually(
        () =>
          h.emulator.calls
            .slice(since)
            .some((c) => c.method === "chat.scheduleMessage" && c.error === "restricted_too_many")
            ? true
            : undefined,
        "Slack's refusal of the crowded reminder",
      );
      await eventually(() => (mine().length === 1 ? true : undefined), "the 1-hour reminder");
      expect(mine()[0]?.text).toContain("starts in 1 hour");
      // The card is not given up on: a join still reaches it.
      const card = await eventually(
        () =>
          ws
            .topLevel(CHANNELS.townHall)
            .find((m) => JSON.stringify(m.blocks ?? "").includes("Crowded hour"))?.ts,
        "the card",
      );
      await h.sandbox.control.setState(event.eventId, { state: "IN_EVENT" });
      await h.sandbox.control.attendees(event.eventId, { join: [{ name: "Early Ann" }] });
      await eventually(
        () =>
          h.emulator.calls
            .slice(since)
            .some((c) => c.method === "chat.update" && c.args.ts === card && c.ok)
            ? true
            : undefined,
        "the card updated",
        15_000,
      );
    } finally {
      for (const o of others) ws.scheduled.delete(o.id);
    }
  });

  it("are deleted on cancel even when the webhooks cannot be removed upstream", async () => {
    const { event, mine } = await notifiedInGeneral("Cancelled in trouble", 8);
    // The events service fails every call for a while: the webhooks stay upstream.
    h.sandbox.control.addFault({ service: "events", status: 503, times: 50 });
    try {
      await onEventCancelled(h.app.deps, TEAM, event.eventId);
    } finally {
      h.sandbox.control.clearFaults();
    }
    await eventually(() => (mine().length === 0 ? true : undefined), "the reminders deleted");
    await eventually(
      () =>
        h.emulator.workspace.topLevel(CHANNELS.general).some((m) => {
          const shown = JSON.stringify(m.blocks ?? "");
          return shown.includes("Cancelled in trouble") && shown.includes("Cancelled");
        })
          ? true
          : undefined,
      "the card marked cancelled",
    );
  });

  it("of an event cancelled without its follow-up are deleted at the next start's reconcile", async () => {
    const { event, mine } = await notifiedInGeneral("Half cancelled", 9);
    // The record says cancelled; the follow-up never ran (a busy lock, a stop in between).
    await patchRecord(h.app.deps, TEAM, event.eventId, { cancelled: true });
    await reconcileEvents(h.app.deps, { concurrency: 2, perSecond: 100 });
    await eventually(() => (mine().length === 0 ? true : undefined), "the reminders deleted");
  });

  it("follow an edit whose follow-up never ran, at the next start's reconcile", async () => {
    const { event, mine } = await notifiedInGeneral("Moved quietly", 10);
    const deps = h.app.deps;
    const link = await deps.store.users.get(TEAM, USERS.omar);
    if (!link) throw new Error("organizer not linked");
    const t = await deps.tokens.userToken(TEAM, link.email, SANDBOX_SEEDS.events);
    const before = await deps.events.getEvent(t.accessToken, t.userId, event.eventId);
    // Running, with people in (its status and count move on their own), but not edited:
    // reconcile reads the event once and leaves it.
    await h.sandbox.control.setState(event.eventId, { state: "IN_EVENT" });
    await h.sandbox.control.attendees(event.eventId, { count: 2 });
    const running = await deps.events.getEvent(t.accessToken, t.userId, event.eventId);
    expect([running.status, running.activeAttendeeCount]).not.toEqual([
      before.status,
      before.activeAttendeeCount,
    ]);
    h.sandbox.control.clearLog();
    await reconcileEvents(deps, { concurrency: 2, perSecond: 100 });
    const reads = () =>
      h.sandbox.control
        .log()
        .filter((e) => e.method === "GET" && e.path.endsWith(`/${event.eventId}`)).length;
    expect(reads()).toBe(1);
    // Moved upstream by an hour; the follow-up (onEventEdited) never ran.
    const newStart = before.start + 3600_000;
    await deps.events.editEvent(t.accessToken, t.userId, event.eventId, {
      start: newStart,
      end: newStart + 3600_000,
    });
    await reconcileEvents(deps, { concurrency: 2, perSecond: 100 });
    await eventually(() => {
      const offsets = mine().map((s) => Math.floor(newStart / 1000) - s.post_at);
      return offsets.length === 2 && offsets[0] === 3600 && offsets[1] === 600 ? true : undefined;
    }, "the reminders moved to the new start");
  });

  it("skips a reminder whose time has already passed", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Starts soon",
      startInMs: 30 * 60_000,
    });
    await h.driver.slashCommand({
      user: USERS.omar,
      channel: CHANNELS.general,
      text: `notify ${event.eventId}`,
    });
    const mine = () => scheduledIn(CHANNELS.general).filter((s) => s.text.includes("Starts soon"));
    const only = await eventually(
      () => (mine().length === 1 ? mine() : undefined),
      "one scheduled reminder",
    );
    expect(only[0]?.text).toContain("starts in 10 minutes");
  });
});
