import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Directory } from "../../src/domain/directory.ts";
import { scheduleEvent } from "../../src/domain/schedule.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { eventually, seedEvent } from "../helpers/live-fixtures.ts";

/**
 * One schedule with a channel, on the real app (sandbox upstream, SQLite, the emulator): the
 * subscription reuses the event and record the schedule just made, so the events service is
 * asked to create and GET the event once each (beside the webhook registration), and the record
 * and the subscription are each written once. The card still goes out.
 */

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

function counting(target: object, label: string, counts: Map<string, number>): void {
  const t = target as Record<string, unknown>;
  for (const key of Object.keys(t)) {
    const fn = t[key];
    if (typeof fn !== "function") continue;
    t[key] = async (...args: unknown[]) => {
      counts.set(`${label}.${key}`, (counts.get(`${label}.${key}`) ?? 0) + 1);
      return (fn as (...a: unknown[]) => Promise<unknown>).apply(target, args);
    };
  }
}

const directory: Directory = {
  profile: async (id) => ({ id, email: undefined, tz: "Europe/Berlin", isAdmin: true, name: id }),
  groupMembers: async () => [],
  userByEmail: async () => undefined,
  isChannelMember: async () => true,
  appReach: async () => "ok",
};

describe("one schedule with a channel", () => {
  it("costs create + 1 GET upstream and one write each of the record and the subscription", async () => {
    const deps = h.app.deps;
    // Links the organizer, as the schedule form requires.
    await seedEvent(deps, { team: TEAM, organizer: USERS.omar, title: "warm-up" });
    const counts = new Map<string, number>();
    counting(deps.events, "upstream", counts);
    counting(deps.store.events, "record", counts);
    counting(deps.store.subscriptions, "subscription", counts);
    const start = Date.now() + 3 * 3600_000;
    const out = await scheduleEvent(
      deps,
      { team: TEAM, user: USERS.omar, directory },
      {
        title: "Counted",
        start,
        end: start + 3600_000,
        timezone: "UTC",
        recurrence: "NONE",
        channel: CHANNELS.general,
      },
      CHANNELS.general,
    );
    expect(out.channel).toEqual({ id: CHANNELS.general });
    expect(Object.fromEntries(counts)).toEqual({
      "upstream.createEvent": 1,
      "upstream.getEvent": 1,
      "upstream.registerWebhook": 1,
      "record.put": 1,
      "subscription.put": 1,
    });
    // What was written is whole: the record names its subscription, which asks for reminders.
    const record = await deps.store.events.get(TEAM, out.event.id);
    expect(record?.subscriptions).toHaveLength(1);
    const sub = await deps.store.subscriptions.get(record?.subscriptions[0] ?? "");
    expect((sub as { reminders?: Record<string, unknown> } | undefined)?.reminders).toHaveProperty(
      CHANNELS.general,
    );
    // And the card goes out.
    await eventually(
      () =>
        h.emulator.calls.find(
          (c) =>
            c.method === "chat.postMessage" &&
            c.args.channel === CHANNELS.general &&
            JSON.stringify(c.args).includes("Counted"),
        ),
      "the card of the scheduled event",
    );
  });
});
