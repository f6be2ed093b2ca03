import type { CallRecord } from "@onair/slack-emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import {
  digestTotals,
  eventually,
  freePort,
  type SeededEvent,
  seedEvent,
} from "../helpers/live-fixtures.ts";
import { type LiveStage, startLiveStage } from "../helpers/live-stage.ts";
import { emptyRedisDatabase } from "../helpers/servers.ts";

/**
 * Slack's pace is about one message a second per channel, whoever posts. Two live events
 * notifying one channel share that allowance: the channel's posts stay about a second apart,
 * and each event's card and digests still end exact.
 */

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const WAVES = 6;
const PER_WAVE = 25;

/** Posts and updates to the channel, in arrival order. */
function channelPosts(calls: readonly CallRecord[], channel: string): CallRecord[] {
  return calls.filter(
    (c) =>
      (c.method === "chat.postMessage" || c.method === "chat.update") &&
      c.args.channel === channel &&
      c.ok,
  );
}

/** The shortest gap between two consecutive posts, and the most posts in any one second. */
function pace(posts: readonly CallRecord[]): { minGapMs: number; busiestSecond: number } {
  const times = posts.map((c) => c.time).sort((a, b) => a - b);
  let minGapMs = Number.POSITIVE_INFINITY;
  let busiestSecond = 0;
  for (let i = 0; i < times.length; i++) {
    const t = times[i] ?? 0;
    if (i > 0) minGapMs = Math.min(minGapMs, t - (times[i - 1] ?? 0));
    const inWindow = times.filter((u) => u >= t && u < t + 1_000).length;
    busiestSecond = Math.max(busiestSecond, inWindow);
  }
  return { minGapMs, busiestSecond };
}

async function notify(event: SeededEvent): Promise<string> {
  const since = h.emulator.calls.length;
  await h.driver.slashCommand({
    user: USERS.omar,
    channel: CHANNELS.events,
    text: `notify ${event.eventId}`,
  });
  await h.emulator.waitForCall(
    (c) => c.method === "response_url" && String(c.args.text).includes(event.eventId),
    { since, timeoutMs: 5_000 },
  );
  return eventually(
    () =>
      h.emulator.workspace
        .topLevel(CHANNELS.events)
        .find((m) => JSON.stringify(m.blocks ?? "").includes(event.title))?.ts,
    "the card",
  );
}

function thread(ts: string): string[] {
  return h.emulator.workspace
    .replies(CHANNELS.events, ts)
    .filter((m) => m.ts !== ts)
    .map((m) => m.text ?? "");
}

describe("two live events in one channel", () => {
  it("share the channel's pace: posts about a second apart, exact counts, nothing twice", async () => {
    const a = await seedEvent(h.app.deps, { team: TEAM, organizer: USERS.omar, title: "Pace A" });
    const b = await seedEvent(h.app.deps, { team: TEAM, organizer: USERS.omar, title: "Pace B" });
    const since = h.emulator.calls.length;
    const [tsA, tsB] = [await notify(a), await notify(b)];
    const control = h.sandbox.control;
    for (const e of [a, b]) await control.setState(e.eventId, { state: "IN_EVENT" });
    for (let w = 0; w < WAVES; w++) {
      await Promise.all([a, b].map((e) => control.attendees(e.eventId, { count: PER_WAVE })));
      await new Promise((r) => setTimeout(r, 400));
    }
    const total = WAVES * PER_WAVE;
    for (const [e, ts] of [
      [a, tsA],
      [b, tsB],
    ] as const) {
      await eventually(
        () => (digestTotals(thread(ts)).joined >= total ? true : undefined),
        `${e.title}'s digests`,
        30_000,
      );
    }
    // Settled: nothing more arrives.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(digestTotals(thread(tsA))).toEqual({ joined: total, left: 0 });
    expect(digestTotals(thread(tsB))).toEqual({ joined: total, left: 0 });
    const cards = h.emulator.workspace
      .topLevel(CHANNELS.events)
      .filter((m) => /Pace [AB]/.test(JSON.stringify(m.blocks ?? "")));
    expect(cards.length).toBe(2);

    const posts = channelPosts(h.emulator.calls.slice(since), CHANNELS.events);
    // Enough posts to say something about the pace: the least a run can make is two cards, each
    // updated once to live and given one digest (how many more depends on the machine's speed).
    expect(posts.length).toBeGreaterThanOrEqual(6);
    const p = pace(posts);
    // One turn a second per channel, shared by both events. Each turn is claimed a second apart;
    // what Slack sees also carries each call's time from claim to send (ms, more on a busy
    // machine). Two pacers, one per event, put posts a few ms apart.
    expect(p.minGapMs).toBeGreaterThanOrEqual(500);
    expect(p.busiestSecond).toBeLessThanOrEqual(2);
  });
});

const REDIS = process.env.TEST_REDIS_URL;
const required = process.env.ONAIR_REQUIRE_SERVICES === "1";
// A database of its own: the app's keys carry no namespace, so they must not meet other files'.
const DB = 12;

describe.skipIf(!REDIS && !required)("two instances on one Redis, one channel", () => {
  let stage: LiveStage;
  afterAll(async () => {
    await stage?.close();
  });

  it("pace the channel together: posts about a second apart, exact counts, nothing twice", async () => {
    stage = await startLiveStage({
      title: "Shared pace A",
      moreTitles: ["Shared pace B"],
      storeUrl: await emptyRedisDatabase(DB),
    });
    const [a, b] = stage.events as [SeededEvent, SeededEvent];
    // Each instance registers its event's webhooks at its own address, so each event's
    // messages land on (and are most likely owned by) a different instance.
    const [portA, portB] = [await freePort(), await freePort()];
    const [appA, appB] = await Promise.all([
      stage.spawn(stage.childEnv({ port: portA, logLevel: "warn" })),
      stage.spawn(stage.childEnv({ port: portB, logLevel: "warn" })),
    ]);
    const since = stage.emulator.calls.length;
    const tsA = await stage.notify(appA.origin, a);
    const tsB = await stage.notify(appB.origin, b);
    const control = stage.sandbox.sandbox.control;
    for (const e of [a, b]) await control.setState(e.eventId, { state: "IN_EVENT" });
    for (let w = 0; w < WAVES; w++) {
      await Promise.all([a, b].map((e) => control.attendees(e.eventId, { count: PER_WAVE })));
      await new Promise((r) => setTimeout(r, 400));
    }
    const total = WAVES * PER_WAVE;
    for (const [e, ts] of [
      [a, tsA],
      [b, tsB],
    ] as const) {
      await eventually(
        () => (digestTotals(stage.view(ts).thread()).joined >= total ? true : undefined),
        `${e.title}'s digests`,
        30_000,
      );
    }
    await new Promise((r) => setTimeout(r, 1_500));
    expect(digestTotals(stage.view(tsA).thread())).toEqual({ joined: total, left: 0 });
    expect(digestTotals(stage.view(tsB).thread())).toEqual({ joined: total, left: 0 });
    const cards = stage.emulator.workspace
      .topLevel(CHANNELS.events)
      .filter((m) => /Shared pace [AB]/.test(JSON.stringify(m.blocks ?? "")));
    expect(cards.length).toBe(2);
    const posts = channelPosts(stage.emulator.calls.slice(since), CHANNELS.events);
    // As above: two cards, each updated once to live and given one digest, at the least.
    expect(posts.length).toBeGreaterThanOrEqual(6);
    const p = pace(posts);
    expect(p.minGapMs).toBeGreaterThanOrEqual(500);
    expect(p.busiestSecond).toBeLessThanOrEqual(2);
  }, 60_000);
});
