import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CARD_EVENT } from "../../src/live/recover.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { eventually, seedEvent } from "../helpers/live-fixtures.ts";
import { loggedLines } from "../helpers/log-lines.ts";

/**
 * A bulk Slack call Slack does not answer in time: the engine's client gives up on it (its
 * timeout, 30 s in production, 1 s here), which is a lost answer. The card's in-flight mark is
 * kept, the lane pauses, and then looks in the channel before posting again: the post, which
 * Slack took late, is found there and adopted, not posted twice. Without the bound the lane would
 * wait for Slack's answer however long it took (the client's default is none).
 */

const TIMEOUT_MS = 1_000;
const LANDS_AFTER_MS = 2_500;

let h: Harness;
beforeAll(async () => {
  // The engine in its own thread, as in production: its clients are the ones bounded.
  h = await startHarness({ liveOptions: { slackCallTimeoutMs: TIMEOUT_MS } });
});
afterAll(async () => {
  await h?.close();
});

describe("a Slack call the engine's client gives up on", () => {
  it("is a lost answer: the card's post is looked for, found once it lands, and not posted again", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Slow Slack",
    });
    const postArrived = h.emulator.slow({
      method: "chat.postMessage",
      channel: CHANNELS.events,
      times: 1,
      ms: LANDS_AFTER_MS,
      takesEffect: "late",
    });
    const since = h.emulator.calls.length;
    await h.driver.slashCommand({
      user: USERS.omar,
      channel: CHANNELS.events,
      text: `notify ${event.eventId} <#${CHANNELS.events}|x>`,
      escaped: true,
    });
    await postArrived;
    const postedAt = Date.now();
    const cards = () =>
      h.emulator.workspace
        .topLevel(CHANNELS.events)
        .filter(
          (m) =>
            (m.metadata as { event_type?: string } | undefined)?.event_type === CARD_EVENT &&
            JSON.stringify(m.metadata).includes(event.eventId),
        );
    // The client gave up before Slack answered: said as a failed call to be tried again.
    const lostAt = await eventually(
      () => loggedLines(h.logs, "live: Slack call failed; will retry")[0]?.time,
      "the lost answer, said",
      10_000,
    );
    // Said when the client gave up, before the post landed (by the line's own time, not by when
    // this test saw it, which load can delay; the landing is checked by the card's ts below).
    expect(lostAt).toBeLessThan(postedAt + LANDS_AFTER_MS);
    // The lane looked in the channel after the post landed, and adopted it: the event going live
    // updates that card in place.
    await h.sandbox.control.setState(event.eventId, { state: "IN_EVENT" });
    const update = await eventually(
      () =>
        h.emulator.calls
          .slice(since)
          .find(
            (c) =>
              c.method === "chat.update" &&
              c.ok &&
              c.args.channel === CHANNELS.events &&
              JSON.stringify(c.args).includes("(live now)"),
          ),
      "the card updated to live",
      15_000,
    );
    expect(cards()).toHaveLength(1);
    expect(update.args.ts).toBe(cards()[0]?.ts);
    // The card's ts is when the post took effect: after the client had given up on it.
    expect(lostAt).toBeLessThan(Number(cards()[0]?.ts) * 1000);
    const calls = h.emulator.calls.slice(since);
    const posts = calls.filter(
      (c) =>
        c.method === "chat.postMessage" &&
        c.args.channel === CHANNELS.events &&
        c.args.thread_ts === undefined,
    );
    expect(posts).toHaveLength(1);
    // It was found by a look in the channel, made after the lost answer.
    expect(
      calls.some((c) => c.method === "conversations.history" && c.args.channel === CHANNELS.events),
    ).toBe(true);
  });
});
