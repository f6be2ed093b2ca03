import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Deps } from "../../src/deps.ts";
import { reconcileEvents } from "../../src/domain/reconcile.ts";
import { SANDBOX_SEEDS } from "../../src/sandbox/index.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { eventually, type SeededEvent, seedEvent } from "../helpers/live-fixtures.ts";

/**
 * Events the service no longer has (deleted outside On Air, or a sandbox that forgot them):
 * reconcile marks them gone, and every surface says so — card, reminders, `/onair list`, App
 * Home, cancel. Only a 404 means gone; a transient failure leaves the event as it is.
 */

let h: Harness;
let doomed: SeededEvent;
let kept: SeededEvent;
let cardTs = "";

beforeAll(async () => {
  h = await startHarness();
  doomed = await seedEvent(h.app.deps, {
    team: TEAM,
    organizer: USERS.omar,
    title: "Zombie town hall",
  });
  kept = await seedEvent(h.app.deps, { team: TEAM, organizer: USERS.omar, title: "Still on" });
  await h.driver.slashCommand({
    user: USERS.omar,
    channel: CHANNELS.general,
    text: `notify ${doomed.eventId} <#${CHANNELS.general}|general>`,
    escaped: true,
  });
  cardTs = await eventually(
    () =>
      h.emulator.workspace
        .topLevel(CHANNELS.general)
        .find((m) => JSON.stringify(m.blocks ?? "").includes("Zombie town hall"))?.ts,
    "the card",
  );
  // Its reminders (an hour and ten minutes before) are scheduled in the channel.
  await eventually(() => (reminders().length === 2 ? true : undefined), "two reminders");
}, 30_000);

afterAll(async () => {
  await h?.close();
});

function reminders() {
  return [...h.emulator.workspace.scheduled.values()].filter(
    (s) => s.channel === CHANNELS.general && s.text.includes("Zombie town hall"),
  );
}

function card(): string {
  const m = h.emulator.workspace.topLevel(CHANNELS.general).find((x) => x.ts === cardTs);
  return JSON.stringify(m?.blocks ?? "");
}

/** Deletes the event at the service, as if someone did it there, not through On Air. */
async function deleteBehindTheAppsBack(deps: Deps, event: SeededEvent) {
  const t = await deps.tokens.userToken(TEAM, "omar@example.com", SANDBOX_SEEDS.events);
  await deps.events.deleteEvent(t.accessToken, t.userId, event.eventId);
}

/** The answer a person reads: an ephemeral reply, or the modal a command opened, once filled. */
async function command(text: string): Promise<string> {
  const since = h.emulator.calls.length;
  await h.driver.slashCommand({ user: USERS.omar, channel: CHANNELS.general, text });
  const reply = await h.emulator.waitForCall(
    (x) => x.method === "response_url" || x.method === "views.update",
    { since, timeoutMs: 5_000 },
  );
  return `${String(reply.args.text ?? "")} ${JSON.stringify(reply.args.blocks ?? reply.args.view ?? "")}`;
}

describe("gone events", () => {
  it("a 503 from the service is not a 404: nothing is marked gone", async () => {
    await deleteBehindTheAppsBack(h.app.deps, doomed);
    h.sandbox.control.addFault({ service: "events", status: 503, times: 50 });
    try {
      const out = await reconcileEvents(h.app.deps, { concurrency: 2, perSecond: 100 });
      expect(out.gone).toBe(0);
      expect(out.skipped).toBeGreaterThan(0);
    } finally {
      h.sandbox.control.clearFaults();
    }
    expect((await h.app.store.events.get(TEAM, doomed.eventId))?.gone).toBeUndefined();
    expect(card()).toContain("Cancel event");
  });

  it("reconcile marks a deleted event gone, and only it; its card says so with no buttons, its reminders go", async () => {
    const out = await reconcileEvents(h.app.deps, { concurrency: 2, perSecond: 100 });
    expect(out).toMatchObject({ gone: 1, skipped: 0 });
    expect((await h.app.store.events.get(TEAM, doomed.eventId))?.gone).toBe(true);
    expect((await h.app.store.events.get(TEAM, kept.eventId))?.gone).toBeUndefined();
    await eventually(
      () => (card().includes("no longer has this event") ? true : undefined),
      "the gone card",
    );
    expect(card()).not.toContain('"type":"actions"');
    expect(card()).not.toContain("Join as an attendee");
    await eventually(() => (reminders().length === 0 ? true : undefined), "reminders deleted");
    // A second walk asks nothing about it: gone is final.
    h.sandbox.control.clearLog();
    const again = await reconcileEvents(h.app.deps, { concurrency: 2, perSecond: 100 });
    expect(again.checked).toBe(1);
    const asked = h.sandbox.control.log().filter((e) => e.path.includes(doomed.eventId));
    expect(asked).toEqual([]);
  });

  it("/onair list and App Home agree, in words, with no buttons for it", async () => {
    const list = await command("list");
    expect(list).toContain("Zombie town hall");
    expect(list).toContain("Gone — the live events service no longer has this event.");
    const since = h.emulator.calls.length;
    await h.driver.event({ type: "app_home_opened", user: USERS.omar, tab: "home" });
    const home = await h.emulator.waitForCall(
      (x) => x.method === "views.publish" && x.args.user_id === USERS.omar,
      { since, timeoutMs: 5_000 },
    );
    const blocks = (home.args.view as { blocks: Array<Record<string, unknown>> }).blocks;
    const text = JSON.stringify(blocks);
    expect(text).toContain("Zombie town hall");
    expect(text).toContain("Gone — the live events service no longer has this event.");
    expect(text).not.toContain(`"value":"${doomed.eventId}"`);
    expect(text).toContain(`"value":"${kept.eventId}"`);
  });

  it("cancel, edit and notify of a gone event say it is gone, not to link again", async () => {
    for (const sub of ["cancel", "edit", "notify"]) {
      const text = await command(`${sub} ${doomed.eventId}`);
      expect(text).toMatch(/no longer has the event \*Zombie town hall\*/);
      expect(text).not.toMatch(/link/);
    }
  });

  it("an event deleted upstream and found by a command is marked gone there and then", async () => {
    await deleteBehindTheAppsBack(h.app.deps, kept);
    const text = await command(`cancel ${kept.eventId}`);
    expect(text).toMatch(/no longer has the event \*Still on\*/);
    expect((await h.app.store.events.get(TEAM, kept.eventId))?.gone).toBe(true);
  });

  it("paces itself: never more GETs in flight than allowed, however many events", async () => {
    const deps = h.app.deps;
    for (let i = 0; i < 12; i++) {
      await deps.store.events.put({
        team: TEAM,
        eventId: `bulk-${i}`,
        organizer: USERS.omar,
        title: `Bulk ${i}`,
        subscriptions: [],
        cards: {},
        instances: {},
        createdAt: Date.now(),
      });
    }
    let inFlight = 0;
    let most = 0;
    const events = new Proxy(deps.events, {
      get(target, prop, receiver) {
        if (prop !== "getEvent") return Reflect.get(target, prop, receiver);
        return async (...args: Parameters<typeof target.getEvent>) => {
          inFlight++;
          most = Math.max(most, inFlight);
          try {
            return await target.getEvent(...args);
          } finally {
            inFlight--;
          }
        };
      },
    });
    const out = await reconcileEvents({ ...deps, events }, { concurrency: 3, perSecond: 200 });
    // Unknown to the service: all twelve are gone; never more than three asked at once.
    expect(out.gone).toBe(12);
    expect(most).toBeLessThanOrEqual(3);
    expect(most).toBeGreaterThan(0);
  });
});
