import type { CallRecord } from "@onair/slack-emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCipher, openStore } from "../../src/store/index.ts";
import { CHANNELS, TEAM, USERS } from "../helpers/app-harness.ts";
import { type ChildApp, digestTotals, eventually, freePort } from "../helpers/live-fixtures.ts";
import { type LiveStage, startLiveStage } from "../helpers/live-stage.ts";

/**
 * kill -9 in the narrowest window there is: Slack has accepted the post (the card, a digest)
 * and the app dies before it records that. The emulator kills the child from its call hook,
 * before it even sends the answer. The next process must find the message in Slack and adopt
 * it: one card, one digest per seq, exact totals.
 */

const JOINS = 40;
const MORE = 7;
const LATER = 3;

let stage: LiveStage;
let env: Record<string, string>;
let cardTs: string;

beforeAll(async () => {
  stage = await startLiveStage({
    title: "Killed after posting",
    tmpPrefix: "onair-faults-kill-after-post-",
  });
  // A fixed port: the webhook URL registered upstream must reach every later process too.
  env = stage.childEnv({ port: await freePort(), logLevel: "warn" });
}, 30_000);

afterAll(async () => {
  await stage?.close();
});

async function start(): Promise<ChildApp> {
  // One process at a time (a test that failed may have left its child running).
  for (const c of stage.children) await c.stop().catch(() => undefined);
  const child = await stage.spawn(env);
  stage.emulator.setAppUrl(child.origin);
  return child;
}

/** SIGKILLs `child` the moment the emulator accepts the first post matching `match`. */
function killOnPost(child: ChildApp, match: (call: CallRecord) => boolean): Promise<void> {
  const exited = new Promise<void>((resolve) => child.proc.once("exit", () => resolve()));
  const off = stage.emulator.onCall((call) => {
    if (call.method !== "chat.postMessage" || !call.ok || !match(call)) return;
    off();
    child.proc.kill("SIGKILL");
  });
  return exited;
}

const isCard = (call: CallRecord) =>
  call.args.thread_ts === undefined &&
  JSON.stringify(call.args.blocks ?? "").includes(stage.event.title);

const cards = () =>
  stage.emulator.workspace
    .topLevel(CHANNELS.events)
    .filter((m) => JSON.stringify(m.blocks ?? "").includes(stage.event.title));

const digests = () =>
  stage.emulator.workspace
    .replies(CHANNELS.events, cardTs)
    // The thread also holds the event's Slack call block (posts/call.ts), which is no digest.
    .filter((m) => (m.metadata as { event_type?: string } | undefined)?.event_type !== "onair_call")
    .map((m) => ({
      text: m.text,
      seq: (m.metadata as { event_payload?: { seq?: number } } | undefined)?.event_payload?.seq,
    }));

const recoveryFailed = (c: ChildApp) => c.output.join("").includes("could not look in Slack");

describe("kill -9 between Slack's answer and the record", () => {
  it("posts the event's card once", async () => {
    const first = await start();
    const killed = killOnPost(first, isCard);
    // The command's own answer may be cut short by the kill; the card is what counts.
    await stage.emulator.driver
      .slashCommand({
        user: USERS.omar,
        channel: CHANNELS.events,
        text: `notify ${stage.event.eventId} <#${CHANNELS.events}|events>`,
        // Already in the form Slack sends (should_escape), not as typed.
        escaped: true,
      })
      .catch(() => undefined);
    await killed;
    expect(cards()).toHaveLength(1);

    const second = await start();
    // The restarted worker resumes the event: a state change must land on the same card.
    await stage.sandbox.sandbox.control.setState(stage.event.eventId, { state: "IN_EVENT" });
    cardTs = await eventually(
      () => cards().find((m) => JSON.stringify(m.blocks).includes("unique"))?.ts,
      "the card updated with the live figures",
      20_000,
    );
    await new Promise((r) => setTimeout(r, 1_500));
    expect(cards()).toHaveLength(1);
    expect(recoveryFailed(second)).toBe(false);
  }, 90_000);

  it("posts each digest once, with exact totals", async () => {
    const third = await start();
    // Hold the thread back (429s) until the whole burst is acknowledged, so it all goes into
    // one digest: the one the kill interrupts.
    stage.emulator.throttle({
      method: "chat.postMessage",
      channel: CHANNELS.events,
      times: 1_000,
      retryAfterSec: 1,
    });
    const burst = await stage.sandbox.sandbox.control.attendees(stage.event.eventId, {
      count: JOINS,
    });
    expect(burst.delivered).toBe(JOINS);
    await stage.waitApplied(JOINS);
    const killed = killOnPost(third, (call) => call.args.thread_ts === cardTs);
    stage.emulator.clearThrottles();
    await killed;
    expect(digestTotals(digests().map((d) => d.text))).toEqual({ joined: JOINS, left: 0 });

    const fourth = await start();
    // The fourth process adopts the digest it finds rather than post it again; later notices go
    // on under the next seq.
    await new Promise((r) => setTimeout(r, 4_000));
    const more = await stage.sandbox.sandbox.control.attendees(stage.event.eventId, {
      count: MORE,
    });
    expect(more.delivered).toBe(MORE);
    await eventually(
      () => (digestTotals(digests().map((d) => d.text)).joined >= JOINS + MORE ? true : undefined),
      "the digest of the later joins",
      20_000,
    );
    await new Promise((r) => setTimeout(r, 1_500));
    expect(digestTotals(digests().map((d) => d.text))).toEqual({ joined: JOINS + MORE, left: 0 });
    // Two digests, each once, in order. Their exact seq numbers depend on how the lane planned
    // while Slack refused its posts: under heavy load the first one seen was seq 2.
    const seqs = digests().map((d) => d.seq ?? 0);
    expect(seqs).toHaveLength(2);
    expect(seqs[1]).toBeGreaterThan(seqs[0] ?? 0);
    expect(cards()).toHaveLength(1);
    expect(recoveryFailed(fourth)).toBe(false);
  }, 90_000);

  it("posts again, with a warning, when Slack will not show the channel's history", async () => {
    // #town-hall, which the bot may not join (channel_is_limited_access): it posts there
    // (chat:write.public) but is no member, so conversations.history answers not_in_channel.
    // The channel must not stall on that.
    stage.emulator.throttle({
      method: "conversations.join",
      channel: CHANNELS.townHall,
      times: 1,
      retryAfterSec: 0,
      error: "channel_is_limited_access",
    });
    const fifth = await start();
    const inTownHall = () =>
      stage.emulator.workspace
        .topLevel(CHANNELS.townHall)
        .filter((m) => JSON.stringify(m.blocks ?? "").includes(stage.event.title));
    const killed = killOnPost(fifth, (call) => call.args.channel === CHANNELS.townHall);
    await stage.emulator.driver
      .slashCommand({
        user: USERS.omar,
        channel: CHANNELS.townHall,
        text: `notify ${stage.event.eventId} <#${CHANNELS.townHall}|town-hall>`,
        // Already in the form Slack sends (should_escape), not as typed.
        escaped: true,
      })
      .catch(() => undefined);
    await killed;
    // The kill may also come before the turn that drained the refresh cleared the event's
    // outbox marker (seen on CI): the marker then names an item that is gone. Left so here every
    // time, it must not hold the channel back until the marker goes stale (30 s).
    const store = await openStore(env.STORE_URL ?? "", { cipher: createCipher(stage.key) });
    try {
      await store.outbox.markWork(TEAM, stage.event.eventId, `${TEAM}:${stage.event.eventId}:gone`);
    } finally {
      await store.close();
    }
    const sixth = await start();
    await eventually(
      () => (inTownHall().length === 2 ? true : undefined),
      "the card posted again",
      20_000,
    );
    // Logged before the post; the log reaches this process through the child's stdout, which
    // can come after the emulator has the post (seen once on CI).
    await eventually(
      () => (recoveryFailed(sixth) ? true : undefined),
      "the warning that the lookup failed",
    );
    expect(
      stage.emulator.calls.some(
        (c) => c.method === "conversations.history" && c.error === "not_in_channel",
      ),
    ).toBe(true);
    expect(cards()).toHaveLength(1);
  }, 90_000);
  it("posts the thread's running count once", async () => {
    // #general with the "counter" noise level: one reply in the card's thread, edited in place.
    const seventh = await start();
    const generalCard = () =>
      stage.emulator.workspace
        .topLevel(CHANNELS.general)
        .find((m) => JSON.stringify(m.blocks ?? "").includes(stage.event.title));
    const counters = () => {
      const card = generalCard();
      if (!card?.ts) return [];
      return stage.emulator.workspace
        .replies(CHANNELS.general, card.ts)
        .filter(
          (m) =>
            (m.metadata as { event_type?: string } | undefined)?.event_type === "onair_counter",
        );
    };
    const killed = killOnPost(
      seventh,
      (call) => call.args.channel === CHANNELS.general && call.args.thread_ts !== undefined,
    );
    await stage.emulator.driver
      .slashCommand({
        user: USERS.omar,
        channel: CHANNELS.general,
        text: `notify ${stage.event.eventId} <#${CHANNELS.general}|general> counter`,
        // Already in the form Slack sends (should_escape), not as typed.
        escaped: true,
      })
      .catch(() => undefined);
    await killed;
    expect(counters()).toHaveLength(1);

    const eighth = await start();
    const more = await stage.sandbox.sandbox.control.attendees(stage.event.eventId, {
      count: LATER,
    });
    expect(more.delivered).toBe(LATER);
    const total = JOINS + MORE + LATER;
    await eventually(
      () => (counters()[0]?.text?.includes(`So far ${total} joined`) ? true : undefined),
      "the running count updated in place",
      20_000,
    );
    await new Promise((r) => setTimeout(r, 1_500));
    expect(counters()).toHaveLength(1);
    expect(recoveryFailed(eighth)).toBe(false);
  }, 90_000);
});
