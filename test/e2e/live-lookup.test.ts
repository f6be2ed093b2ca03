import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CARD_EVENT } from "../../src/live/recover.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { notifyCard } from "../helpers/live-card.ts";
import { eventually, seedEvent } from "../helpers/live-fixtures.ts";

/**
 * A post whose outcome Slack could not tell (internal_error: "some aspect of the operation
 * succeeded") is looked for before it is made again. During a Slack incident the lookup fails
 * too; the engine waits it out rather than posting a second card after a few quick tries.
 */

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

describe("a lookup during a Slack incident", () => {
  it("is asked again until Slack answers; the card is not posted twice", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Incident card",
    });
    // The card's post takes effect and is answered internal_error; then the channel's history
    // fails the same way three times in a row. Each try waits longer (1 s after the post's
    // error, then 2, 4, 8 s): about 15 s before Slack answers.
    h.emulator.slow({
      method: "chat.postMessage",
      channel: CHANNELS.events,
      times: 1,
      ms: 0,
      error: "internal_error",
    });
    h.emulator.throttle({
      method: "conversations.history",
      channel: CHANNELS.events,
      times: 3,
      retryAfterSec: 0,
      error: "internal_error",
    });
    const since = h.emulator.calls.length;
    await h.driver.slashCommand({
      user: USERS.omar,
      channel: CHANNELS.events,
      text: `notify ${event.eventId}`,
    });
    const ws = h.emulator.workspace;
    const cards = () =>
      ws
        .topLevel(CHANNELS.events)
        .filter(
          (m) =>
            (m.metadata as { event_type?: string } | undefined)?.event_type === CARD_EVENT &&
            JSON.stringify(m.metadata).includes(event.eventId),
        );
    // Slack answers at last: the card is found and kept.
    await eventually(
      () =>
        h.emulator.calls.slice(since).some((c) => c.method === "conversations.history" && c.ok)
          ? true
          : undefined,
      "the history read once Slack is back",
      45_000,
    );
    const own = cards()[0]?.ts;
    expect(own).toBeDefined();
    await h.sandbox.control.setState(event.eventId, { state: "IN_EVENT" });
    await h.sandbox.control.attendees(event.eventId, { join: [{ name: "Patient Pat" }] });
    await eventually(
      () =>
        h.emulator.calls
          .slice(since)
          .some((c) => c.method === "chat.update" && c.args.ts === own && c.ok)
          ? true
          : undefined,
      "the card updated",
      15_000,
    );
    const history = h.emulator.calls
      .slice(since)
      .filter((c) => c.method === "conversations.history");
    expect(history.map((c) => c.error ?? "ok")).toEqual([
      "internal_error",
      "internal_error",
      "internal_error",
      "ok",
    ]);
    expect(cards()).toHaveLength(1);
  }, 90_000);

  it("of a digest does not hold up the card: the card and the thread still take turns", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Thread in trouble",
    });
    const ts = await notifyCard(h, event, CHANNELS.townHall, "every");
    await h.sandbox.control.setState(event.eventId, { state: "IN_EVENT" });
    // The first digest takes effect and is answered internal_error; the thread's replies then
    // fail three times in a row, while the event's state changes.
    h.emulator.slow({
      method: "chat.postMessage",
      channel: CHANNELS.townHall,
      times: 1,
      ms: 0,
      error: "internal_error",
    });
    h.emulator.throttle({
      method: "conversations.replies",
      channel: CHANNELS.townHall,
      times: 3,
      retryAfterSec: 0,
      error: "internal_error",
    });
    const since = h.emulator.calls.length;
    await h.sandbox.control.attendees(event.eventId, { join: [{ name: "Thread Tess" }] });
    await h.emulator.waitForCall(
      (c) => c.method === "conversations.replies" && c.error === "internal_error",
      { since, timeoutMs: 15_000 },
    );
    await h.sandbox.control.setState(event.eventId, { state: "PREP_EVENT" });
    const replies = () =>
      h.emulator.calls.slice(since).filter((c) => c.method === "conversations.replies");
    await eventually(
      () => (replies().some((c) => c.ok) ? true : undefined),
      "the thread read once Slack is back",
      45_000,
    );
    // The card was updated while the thread's lookup was still failing.
    const lastFailed = replies()
      .filter((c) => !c.ok)
      .at(-1);
    const cardUpdate = h.emulator.calls
      .slice(since)
      .find((c) => c.method === "chat.update" && c.args.ts === ts && c.ok);
    expect(cardUpdate).toBeDefined();
    expect(cardUpdate!.seq).toBeLessThan(lastFailed!.seq);
  }, 90_000);
});
