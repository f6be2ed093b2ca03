import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CARD_EVENT } from "../../src/live/recover.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
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
});
