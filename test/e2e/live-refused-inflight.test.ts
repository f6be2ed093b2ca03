import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { CARD_EVENT } from "../../src/live/recover.ts";
import { heldRepo } from "../../src/live/set-aside.ts";
import { EventLive } from "../../src/live/state.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { eventually, seedEvent } from "../helpers/live-fixtures.ts";

/**
 * The model throwing on an item while the event's card is still on its way to Slack. The run is
 * dropped and the event read again from its last save, which holds the post's in-flight mark: the
 * new run looks in the channel before posting. The post must have landed by then, or it looks too
 * early, finds nothing and posts a second card. So the new run's lane in that channel starts only
 * once the call under way has settled (Lane's `after`, bounded by the Slack client's timeout),
 * however long Slack takes. The emulator holds the card's post back 4 s before it takes effect
 * (the request slow on its way in), longer than the 3 s an earlier version waited at the reload,
 * so a lookup made before it lands finds nothing.
 *
 * The webhooks are sent only once the post has reached the emulator (its slow rule says so), so
 * the model throws while the post is in flight; the test then waits past the post's landing, so
 * a second card would be seen. It fails with no wait at all, and with the earlier version's
 * bounded wait (two cards: the new run looked before the post landed), 3 of 3 runs each.
 */

const realApply = EventLive.prototype.apply;
const LANDS_AFTER_MS = 4_000;
/** When the model first threw on each attendee whose name starts "Bug ". */
const threwAt = new Map<string, number>();

let h: Harness;
beforeAll(async () => {
  // Inline: the engine runs in this process, where the model's apply can be made to throw.
  h = await startHarness({ liveEngine: "inline" });
});
afterAll(async () => {
  await h?.close();
});
beforeEach(() => {
  vi.spyOn(EventLive.prototype, "apply").mockImplementation(function (
    this: EventLive,
    ...args: Parameters<EventLive["apply"]>
  ) {
    const result = realApply.apply(this, args);
    const msg = args[0];
    if (msg.type === "ATTENDEE_INFO" && msg.info.name.startsWith("Bug ")) {
      if (!threwAt.has(msg.info.name)) threwAt.set(msg.info.name, Date.now());
      throw new TypeError(`no seat for ${msg.info.name}`);
    }
    return result;
  });
});
afterEach(() => {
  vi.restoreAllMocks();
});

/**
 * An event notified to `channel`, its card's post held back by the emulator (see above). Each
 * test has its own channel: a post to the channel by an earlier test's event (its thread) would
 * be the one held.
 */
async function notifiedWithCardHeld(title: string, channel: string) {
  const event = await seedEvent(h.app.deps, { team: TEAM, organizer: USERS.omar, title });
  const postArrived = h.emulator.slow({
    method: "chat.postMessage",
    channel,
    times: 1,
    ms: LANDS_AFTER_MS,
    takesEffect: "late",
  });
  const since = h.emulator.calls.length;
  await h.driver.slashCommand({
    user: USERS.omar,
    channel,
    text: `notify ${event.eventId} <#${channel}|x>`,
    escaped: true,
  });
  // The notify goes on after its ack: the webhooks are registered, then the card is posted.
  await eventually(
    async () =>
      (await h.app.store.subscriptions.forEvent(TEAM, event.eventId)).length > 0 ? true : undefined,
    "the subscription",
  );
  // The card's post has reached Slack and is held back there.
  await postArrived;
  const postedAt = Date.now();
  const cards = () =>
    h.emulator.workspace
      .topLevel(channel)
      .filter(
        (m) =>
          (m.metadata as { event_type?: string } | undefined)?.event_type === CARD_EVENT &&
          JSON.stringify(m.metadata).includes(event.eventId),
      );
  const topLevelPosts = () =>
    h.emulator.calls
      .slice(since)
      .filter(
        (c) =>
          c.method === "chat.postMessage" &&
          c.args.channel === channel &&
          c.args.thread_ts === undefined,
      );
  /** Resolves once the held post has landed, and a card posted meanwhile would have too. */
  const landed = () =>
    new Promise((r) => setTimeout(r, Math.max(0, postedAt + LANDS_AFTER_MS + 300 - Date.now())));
  /** The one card is the post held (else the test held another call, and tested nothing). */
  const cardIsTheHeldPost = () =>
    expect(Number(cards()[0]?.ts) * 1000).toBeGreaterThanOrEqual(postedAt + LANDS_AFTER_MS - 500);
  return { event, since, postedAt, cards, topLevelPosts, landed, cardIsTheHeldPost };
}

describe("an item the live model throws on, while the card's post is in flight", () => {
  it("is set aside once the post has landed; the card is posted once and goes on", async () => {
    const { event, since, postedAt, cards, topLevelPosts, landed, cardIsTheHeldPost } =
      await notifiedWithCardHeld("Card in flight", CHANNELS.events);
    // Only now does the event go live, Ada join, then Bob (the bug), so the model throws while
    // the post is in flight.
    await h.sandbox.control.setState(event.eventId, { state: "IN_EVENT" });
    for (const name of ["Ada Lovelace", "Bug Bob"]) {
      const res = await h.sandbox.control.attendees(event.eventId, { join: [{ name }] });
      expect(res.delivered).toBe(1);
    }
    await eventually(
      () => (h.logs.join("").includes("the live model threw on an outbox item") ? true : undefined),
      "the model's throw, said",
      10_000,
    );
    // The run after the reload adopted the card and went on with it: Ada in its thread, the card
    // live; Bob set aside with why.
    const digestOfAda = await eventually(
      () =>
        h.emulator.calls
          .slice(since)
          .find(
            (c) =>
              c.method === "chat.postMessage" &&
              c.ok &&
              c.args.thread_ts !== undefined &&
              JSON.stringify(c.args).includes("Ada Lovelace"),
          ),
      "Ada's digest",
      15_000,
    );
    // The post held back has landed by now (a second card, had the new run posted one, would
    // have landed already: it was not held).
    await landed();
    // The throw came while the card was still on its way (it took effect, and got its ts, after):
    // else this run did not test the wait.
    const threw = threwAt.get("Bug Bob") ?? 0;
    expect(threw).toBeGreaterThan(postedAt);
    expect(Number(cards()[0]?.ts) * 1000).toBeGreaterThan(threw);
    expect(cards()).toHaveLength(1);
    cardIsTheHeldPost();
    const card = cards()[0]?.ts;
    expect(digestOfAda.args.thread_ts).toBe(card);
    // The card shows the event live: posted so, if the state came before the post was planned,
    // or updated to it.
    await eventually(
      () => (cards()[0]?.text?.includes("(live now)") ? true : undefined),
      "the card live",
    );
    const held = await h.app.store.repository(heldRepo).list(`${TEAM}:${event.eventId}:`);
    expect(
      held.map((r) => (r.value.item.message as { info?: { name?: string } }).info?.name),
    ).toEqual(["Bug Bob"]);
    expect(held[0]?.value.why).toBe("TypeError: no seat for Bug Bob");
    expect(topLevelPosts()).toHaveLength(1);
  });

  it("past the breaker, the run dropped as it is: the event's next run waits for the post too", async () => {
    // The breaker drops the run with its lease given back (not reloaded): the engine's next look
    // at its markers takes the event up again at once and wakes its lanes, which look in the
    // channel for the card in flight. It fails when that run does not wait for the post (two
    // cards: it looked before the post landed).
    const { event, postedAt, cards, topLevelPosts, landed, cardIsTheHeldPost } =
      await notifiedWithCardHeld("Breaker with a card in flight", CHANNELS.townHall);
    const bugs = ["Bug Bea 1", "Bug Bea 2", "Bug Bea 3", "Bug Bea 4"];
    await h.sandbox.control.setState(event.eventId, { state: "IN_EVENT" });
    const res = await h.sandbox.control.attendees(event.eventId, {
      join: bugs.map((name) => ({ name })),
    });
    expect(res.delivered).toBe(bugs.length);
    await eventually(
      () => (h.logs.join("").includes("taken as the event's fault") ? true : undefined),
      "the breaker, said",
      10_000,
    );
    const brokeAt = Date.now();
    await landed();

    // The breaker tripped while the card was on its way: else this run did not test the wait.
    expect(Math.min(...bugs.map((b) => threwAt.get(b) ?? 0))).toBeGreaterThan(postedAt);
    expect(brokeAt).toBeLessThan(postedAt + LANDS_AFTER_MS);
    expect(cards()).toHaveLength(1);
    expect(topLevelPosts()).toHaveLength(1);
    cardIsTheHeldPost();
  });
});
