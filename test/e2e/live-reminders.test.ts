import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { onEventCancelled, onEventEdited } from "../../src/live/lifecycle.ts";
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
    const moved = scheduledIn(CHANNELS.townHall);
    expect(moved.map((s) => Math.floor(newStart / 1000) - s.post_at)).toEqual([3600, 600]);
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
    expect(scheduledIn(CHANNELS.townHall)).toEqual([]);
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
    const only = await eventually(
      () =>
        scheduledIn(CHANNELS.general).length === 1 ? scheduledIn(CHANNELS.general) : undefined,
      "one scheduled reminder",
    );
    expect(only[0]?.text).toContain("starts in 10 minutes");
  });
});
