import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CARD_EVENT } from "../../src/live/recover.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { eventually, seedEvent } from "../helpers/live-fixtures.ts";

/**
 * Another app in the workspace can do what no member can: post a message carrying any metadata.
 * After a lost answer the live engine looks in Slack for what it may have posted, by metadata;
 * it must take only its own posts (its bot_id or user, from auth.test) for them.
 */

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

describe("another app's messages", () => {
  it("are not taken for the card after a lost answer, even carrying the card's metadata", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Copied card",
    });
    const ws = h.emulator.workspace;
    const ch = ws.resolveChannel(CHANNELS.events);
    if (!ch) throw new Error("no events channel");
    const copycat = ws.addBot("Copycat");
    // The card's post takes effect and is answered internal_error (its outcome unknown); at
    // that moment the other app posts a message with the card's metadata, newer than the card.
    h.emulator.slow({
      method: "chat.postMessage",
      channel: CHANNELS.events,
      times: 1,
      ms: 0,
      error: "internal_error",
    });
    let planted: string | undefined;
    const off = h.emulator.onCall((c) => {
      if (planted !== undefined || c.method !== "chat.postMessage") return;
      if (c.error !== "internal_error") return;
      planted = ws.postMessage(ch, copycat.id, {
        text: "Copied card",
        metadata: { event_type: CARD_EVENT, event_payload: { eventId: event.eventId } },
      }).ts;
    });
    const since = h.emulator.calls.length;
    try {
      await h.driver.slashCommand({
        user: USERS.omar,
        channel: CHANNELS.events,
        text: `notify ${event.eventId}`,
      });
      await eventually(() => planted, "the lost card post and the copy");
    } finally {
      off();
    }
    const bot = ws.app.botUserId;
    const cards = () =>
      ws
        .topLevel(CHANNELS.events)
        .filter(
          (m) =>
            m.user === bot &&
            (m.metadata as { event_type?: string } | undefined)?.event_type === CARD_EVENT &&
            JSON.stringify(m.metadata).includes(event.eventId),
        );
    const own = await eventually(() => cards()[0]?.ts, "the app's own card");
    expect(ws.topLevel(CHANNELS.events).find((m) => m.ts === planted)?.bot_id).not.toBe(
      ws.app.botId,
    );
    // The engine looked (the outcome was unknown) and went on with its own card: a join is
    // shown there, never on the copy, and the card was not posted twice.
    await h.sandbox.control.setState(event.eventId, { state: "IN_EVENT" });
    await h.sandbox.control.attendees(event.eventId, { join: [{ name: "Una Copy" }] });
    await eventually(
      () =>
        h.emulator.calls
          .slice(since)
          .some((c) => c.method === "chat.update" && c.args.ts === own && c.ok)
          ? true
          : undefined,
      "the app's card updated",
      15_000,
    );
    const after = h.emulator.calls.slice(since);
    expect(
      after.some(
        (c) => c.method === "conversations.history" && c.args.channel === CHANNELS.events && c.ok,
      ),
    ).toBe(true);
    expect(after.filter((c) => c.args.ts === planted)).toEqual([]);
    expect(cards()).toHaveLength(1);
  });
});
