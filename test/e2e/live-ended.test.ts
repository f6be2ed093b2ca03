import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildManifest } from "../../manifest/manifest.ts";
import { eventOf } from "../../src/domain/subscription.ts";
import { subscriptionOf } from "../../src/domain/subscriptions.ts";
import { liveRepo, loadEventLive, sessionsRepo } from "../../src/live/live-record.ts";
import { SANDBOX_SEEDS } from "../../src/sandbox/index.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { notifyCard } from "../helpers/live-card.ts";
import { eventually, type SeededEvent, seedEvent } from "../helpers/live-fixtures.ts";

/**
 * An instance that has ended reads as ended everywhere its state shows: the card ("Ended", when,
 * the final figures), the join link's unfurl, App Home, `/onair list` and `show`, by each of the
 * three rules (a later NOT_STARTED, a new instance id, the scheduled end passed quiet), and
 * still after a restart on the same store. A new instance then starts its own card state.
 */

const QUIET_MS = 4_000;
const domains = buildManifest("https://onair.example.com").features.unfurl_domains;

let h: Harness;
let dir: string;
/** One key for both starts: the restarted app opens what the first sealed. */
const key = randomBytes(32).toString("base64");

function start(): Promise<Harness> {
  return startHarness({
    storeUrl: `sqlite://${join(dir, "onair.sqlite")}`,
    liveOptions: { quietMs: QUIET_MS },
    sandboxStateFile: join(dir, "sandbox.json"),
    env: { ONAIR_ENCRYPTION_KEY: key },
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "onair-live-ended-"));
  h = await start();
});
afterAll(async () => {
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

function cardOf(channel: string, ts: string): string {
  const m = h.emulator.workspace.topLevel(channel).find((x) => x.ts === ts);
  return JSON.stringify(m?.blocks ?? "") + String(m?.text ?? "");
}

function waitCard(channel: string, ts: string, has: string, what: string): Promise<string> {
  return eventually(
    () => {
      const c = cardOf(channel, ts);
      return c.includes(has) ? c : undefined;
    },
    `${what}: ${cardOf(channel, ts)}`,
    20_000,
  );
}

async function unfurlOf(event: SeededEvent, channel: string): Promise<string> {
  const rec = await h.app.store.events.get(TEAM, event.eventId);
  const sub = rec ? await subscriptionOf(h.app.deps, rec) : undefined;
  const e = sub ? eventOf(sub.sub) : undefined;
  const link = `https://${e?.attendeeUrl}`;
  const since = h.emulator.calls.length;
  const shared = await h.driver.postMessage({
    user: USERS.member,
    channel,
    text: `Join: <${link}>`,
    unfurlDomains: domains,
  });
  expect(shared.result?.status).toBe(200);
  // The unfurl that carries the card (Work Objects are off in the emulator, as on a new app).
  await h.emulator.waitForCall((c) => c.method === "chat.unfurl" && c.args.unfurls !== undefined, {
    since,
    timeoutMs: 5_000,
  });
  const msg = h.emulator.workspace.topLevel(channel).find((m) => m.ts === shared.ts);
  return JSON.stringify(msg?.unfurls?.[link] ?? "");
}

async function homeOf(user: string): Promise<string> {
  const since = h.emulator.calls.length;
  await h.driver.event({ type: "app_home_opened", user, tab: "home" });
  const home = await h.emulator.waitForCall(
    (x) => x.method === "views.publish" && x.args.user_id === user,
    { since, timeoutMs: 10_000 },
  );
  return JSON.stringify(home.args.view);
}

async function command(text: string): Promise<string> {
  const since = h.emulator.calls.length;
  await h.driver.slashCommand({ user: USERS.omar, channel: CHANNELS.events, text });
  const reply = await h.emulator.waitForCall((c) => c.method === "response_url", {
    since,
    timeoutMs: 10_000,
  });
  return JSON.stringify(reply.args);
}

/** The block of `surface` (JSON) that names the event, up to the next event's. */
function around(surface: string, title: string): string {
  const at = surface.indexOf(title);
  expect(at, `${title} in ${surface.slice(0, 400)}`).toBeGreaterThanOrEqual(0);
  return surface.slice(at, at + 700);
}

/** The event's live model as its owner last saved it: what any instance reading the store sees. */
async function savedLive(eventId: string) {
  const store = h.app.store;
  return (
    await loadEventLive(store.repository(liveRepo), store.repository(sessionsRepo), TEAM, eventId)
  ).live;
}

async function expectEndedEverywhere(
  event: SeededEvent,
  ts: string,
  /** A one-off event past its schedule is listed (list, Home) only until its instance ends. */
  listed = true,
): Promise<void> {
  const card = await waitCard(
    CHANNELS.events,
    ts,
    "*State:* :black_circle: Ended <!date^",
    "the ended card",
  );
  expect(card).not.toContain("Live now");
  expect(card).not.toContain("Attendees now");
  expect(card).toContain("(ended)");
  const unfurl = await unfurlOf(event, CHANNELS.events);
  expect(unfurl).toContain("Ended");
  expect(unfurl).not.toContain("Live now");
  expect(unfurl).not.toContain("attendees now");
  if (listed) {
    const home = around(await homeOf(USERS.omar), event.title);
    expect(home).toContain("Ended <!date^");
    expect(home).not.toContain("Live now");
  } else expect(await homeOf(USERS.omar)).not.toContain(event.title);
  if (listed) {
    const list = around(await command("list"), event.title);
    expect(list).toContain("Ended <!date^");
    expect(list).not.toContain("Live now");
  } else expect(await command("list")).not.toContain(event.title);
  const show = await command(`show ${event.eventId}`);
  expect(show).toContain("Ended <!date^");
  expect(show).not.toContain("Live now");
  expect((await h.app.deps.live.figures(TEAM, event.eventId))?.endedAt).toBeGreaterThan(0);
}

describe("an ended instance reads as ended everywhere", () => {
  it("ended by a later NOT_STARTED: card, unfurl, Home, list and show; still after a restart", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Over by not started",
    });
    const ts = await notifyCard(h, event, CHANNELS.events);
    const c = h.sandbox.control;
    await c.setState(event.eventId, { state: "PREP_EVENT" });
    await c.setState(event.eventId, { state: "IN_EVENT" });
    const burst = await c.attendees(event.eventId, { count: 40, concurrency: 8 });
    await c.attendees(event.eventId, {
      leave: burst.joined.slice(0, 7).map((j) => j.endpointGuid),
    });
    await waitCard(CHANNELS.events, ts, "Attendees now *33*", "33 in");
    expect(cardOf(CHANNELS.events, ts)).toContain("Live now");
    const live = around(await homeOf(USERS.omar), event.title);
    expect(live).toContain("Live now");

    await c.setState(event.eventId, { state: "NOT_STARTED" });
    await eventually(
      () =>
        h.emulator.workspace.replies(CHANNELS.events, ts).some((m) => Array.isArray(m.files))
          ? true
          : undefined,
      "the report",
      20_000,
    );
    await expectEndedEverywhere(event, ts);
    const card = cardOf(CHANNELS.events, ts);
    expect(card).toContain("Final figures: peak *40* · unique *40* · present at the end *33*");
    // What other readers of the store see: the owner's saved model (LivePort.figures reads it;
    // the engine no longer copies figures onto the event record).
    const saved = await savedLive(event.eventId);
    expect(
      [...saved.instances.values()].some((i) => i.state && typeof i.endedAt === "number"),
    ).toBe(true);

    // Across a restart on the same store: still ended, on every surface.
    await h.close();
    // A fresh emulated workspace (the card's message is not in it); the store and sandbox kept.
    h = await start();
    const figures = await h.app.deps.live.figures(TEAM, event.eventId);
    expect(figures?.endedAt).toBeGreaterThan(0);
    expect(figures?.present).toBe(33);
    const home = around(await homeOf(USERS.omar), event.title);
    expect(home).toContain("Ended <!date^");
    const list = around(await command("list"), event.title);
    expect(list).toContain("Ended <!date^");
  }, 90_000);

  it("ended by a new instance id: the old one's report, and the new instance starts its own card state", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Over by a new instance",
    });
    const ts = await notifyCard(h, event, CHANNELS.events);
    const c = h.sandbox.control;
    const first = await c.setState(event.eventId, { state: "IN_EVENT" });
    await c.attendees(event.eventId, { count: 5 });
    await waitCard(CHANNELS.events, ts, "Attendees now *5*", "5 in");

    // The next occurrence's instance is heard of: the first has ended.
    await c.setState(event.eventId, { state: "NOT_STARTED", instanceId: "second-instance" });
    await eventually(
      () =>
        h.emulator.workspace.replies(CHANNELS.events, ts).some((m) => Array.isArray(m.files))
          ? true
          : undefined,
      "the first instance's report",
      20_000,
    );
    const card = await waitCard(CHANNELS.events, ts, "Not started yet", "the new instance");
    expect(card).not.toContain("Live now");
    expect(card).toContain("Attendees now *0* · peak *0* · unique *0*");
    // The first instance ended, in the owner's saved model (not copied onto the event record).
    const saved = await savedLive(event.eventId);
    expect(saved.instances.get(first.instanceId)?.state).toBeDefined();
    expect(saved.instances.get(first.instanceId)?.endedAt).toBeGreaterThan(0);
    const figures = await h.app.deps.live.figures(TEAM, event.eventId);
    expect(figures).toMatchObject({ instanceId: "second-instance", present: 0 });
    expect(figures?.endedAt).toBeUndefined();

    // The new instance goes live, then ends like any other.
    await c.setState(event.eventId, { state: "IN_EVENT" });
    await waitCard(CHANNELS.events, ts, "Live now", "the second instance live");
    await c.setState(event.eventId, { state: "NOT_STARTED" });
    await expectEndedEverywhere(event, ts);
  }, 90_000);

  it("ended by its scheduled end passing quietly: every surface, with no message to say so", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Over by the clock",
      // Started two hours ago, ended an hour ago: only the last message holds the end back.
      startInMs: -2 * 3_600_000,
    });
    const ts = await notifyCard(h, event, CHANNELS.events);
    const c = h.sandbox.control;
    await c.setState(event.eventId, { state: "IN_EVENT" });
    await c.attendees(event.eventId, { count: 3 });
    await eventually(
      async () =>
        (await h.app.deps.live.figures(TEAM, event.eventId))?.unique === 3 ? 1 : undefined,
      "3 in",
    );
    // Running over its schedule: listed while on the air, on Home too.
    expect(around(await command("list"), event.title)).toContain("Live now");
    expect(around(await homeOf(USERS.omar), event.title)).toContain("Live now");
    await expectEndedEverywhere(event, ts, false);
    expect(cardOf(CHANNELS.events, ts)).toContain(
      "Final figures: peak *3* · unique *3* · present at the end *3*",
    );
  }, 90_000);

  it("the card and /onair show carry the event's description, escaped and trimmed", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Described town hall",
    });
    const deps = h.app.deps;
    const link = await deps.store.users.get(TEAM, USERS.omar);
    if (!link) throw new Error("organizer not linked");
    const t = await deps.tokens.userToken(TEAM, link.email, SANDBOX_SEEDS.events);
    const description = `  Agenda for <!channel> & <@U0ADA0ADMIN>\n\n\n\nQ&A at the end ${"more ".repeat(200)}`;
    await deps.events.editEvent(t.accessToken, t.userId, event.eventId, { description });
    const ts = await notifyCard(h, event, CHANNELS.events);
    const card = await waitCard(CHANNELS.events, ts, "card_description", "the description");
    expect(card).toContain(
      "Agenda for &lt;!channel&gt; &amp; &lt;@U0ADA0ADMIN&gt;\\n\\nQ&amp;A at",
    );
    expect(card).not.toContain("<!channel>");
    expect(card).toContain("…");
    const show = await command(`show ${event.eventId}`);
    expect(show).toContain("Agenda for &lt;!channel&gt;");
    // The card keeps 500 characters of it; show keeps more.
    expect(show).toContain("more ".repeat(150).trim());
    expect(card).not.toContain("more ".repeat(150).trim());
  }, 60_000);
});
