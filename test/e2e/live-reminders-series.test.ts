import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { onEventCancelled, onEventEdited } from "../../src/domain/event-lifecycle.ts";
import { SANDBOX_SEEDS } from "../../src/sandbox/index.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { eventually, seedEvent } from "../helpers/live-fixtures.ts";

/**
 * A daily series gets its reminders before every occurrence, not only the first: scheduled on
 * notify, moved on edit (every occurrence's), removed on cancel. (The 120-day horizon and the
 * top-up as days pass are in test/unit/live/reminders.test.ts, on a clock.)
 */

const DAY = 86_400_000;
const COUNT = 4;

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ liveOptions: { paceMs: 200 } });
});
afterAll(async () => {
  await h?.close();
});

function scheduled(title: string) {
  return [...h.emulator.workspace.scheduled.values()]
    .filter((s) => s.channel === CHANNELS.general && s.text.includes(title))
    .sort((a, b) => a.post_at - b.post_at);
}

/** post_at of 1 h and 10 min before each of `count` daily starts from `start`. */
function expected(start: number, count = COUNT): number[] {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const s = Math.floor((start + i * DAY) / 1000);
    out.push(s - 3600, s - 600);
  }
  return out;
}

describe("reminders of a daily series", () => {
  it("are scheduled before every occurrence, moved on edit and removed on cancel", async () => {
    const title = "Daily stand-up stream";
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title,
      startInMs: 3 * 3600_000,
    });
    const deps = h.app.deps;
    const link = await deps.store.users.get(TEAM, USERS.omar);
    if (!link) throw new Error("organizer not linked");
    const t = await deps.tokens.userToken(TEAM, link.email, SANDBOX_SEEDS.events);
    const recurrencePattern = {
      recurrenceType: "DAILY",
      endDate: null,
      recurrenceCount: COUNT,
      frequency: 1,
      daysOfWeekMask: 0,
      dayOfMonth: 0,
      weekOfMonth: "NONE",
    };
    await deps.events.editEvent(t.accessToken, t.userId, event.eventId, { recurrencePattern });
    const first = await deps.events.getEvent(t.accessToken, t.userId, event.eventId);
    expect(first.recurrencePattern?.recurrenceCount).toBe(COUNT);

    await h.driver.slashCommand({
      user: USERS.omar,
      channel: CHANNELS.general,
      text: `notify ${event.eventId}`,
    });
    const all = await eventually(
      () => (scheduled(title).length === 2 * COUNT ? scheduled(title) : undefined),
      `reminders before all ${COUNT} occurrences`,
      20_000,
    );
    expect(all.map((s) => s.post_at)).toEqual(expected(first.start));
    // Each names its own occurrence's start, not the series' first.
    const lastStart = Math.floor((first.start + (COUNT - 1) * DAY) / 1000);
    expect(all.at(-1)?.text).toContain(`<!date^${lastStart}^`);

    // Edit: the series moves two hours later; every occurrence's reminders move with it.
    const newStart = first.start + 2 * 3600_000;
    await deps.events.editEvent(t.accessToken, t.userId, event.eventId, {
      start: newStart,
      end: newStart + 3600_000,
    });
    await onEventEdited(deps, TEAM, event.eventId);
    const moved = await eventually(
      () => {
        const now = scheduled(title).map((s) => s.post_at);
        return JSON.stringify(now) === JSON.stringify(expected(newStart)) ? now : undefined;
      },
      "every occurrence's reminders moved",
      30_000,
    );
    expect(moved).toHaveLength(2 * COUNT);
    for (const old of all) expect(h.emulator.workspace.scheduled.has(old.id)).toBe(false);

    await onEventCancelled(deps, TEAM, event.eventId);
    await eventually(
      () => (scheduled(title).length === 0 ? true : undefined),
      "every reminder removed on cancel",
      30_000,
    );
  }, 90_000);
});
