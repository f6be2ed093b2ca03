import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { onEventCancelled } from "../../src/domain/event-lifecycle.ts";
import { liveRepo, loadEventLive, sessionsRepo } from "../../src/live/live-record.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { cardTsOf } from "../helpers/live-card.ts";
import { digestTotals, eventually, type SeededEvent, seedEvent } from "../helpers/live-fixtures.ts";
import { createSecretScanner } from "../helpers/secrets.ts";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

async function notify(event: SeededEvent, channel: string, extra = ""): Promise<string> {
  const since = h.emulator.calls.length;
  await h.driver.slashCommand({
    user: USERS.omar,
    channel,
    text: `notify ${event.eventId} <#${channel}|x> ${extra}`.trim(),
    // Already in the form Slack sends (should_escape), not as typed.
    escaped: true,
  });
  // Another test's late reply may land after `since`: wait for the one about this notify.
  const reply = await h.emulator.waitForCall(
    (c) =>
      c.method === "response_url" &&
      String(c.args.text).includes(event.eventId) &&
      String(c.args.text).includes(`<#${channel}>`),
    { since, timeoutMs: 5_000 },
  );
  expect(String(reply.args.text)).toContain("now go to");
  return cardTs(channel, event);
}

/** The card's ts, once posted. */
function cardTs(channel: string, event: SeededEvent): Promise<string> {
  return cardTsOf(h, channel, event.title);
}

function cardOf(channel: string, ts: string): string {
  const m = h.emulator.workspace.topLevel(channel).find((x) => x.ts === ts);
  return JSON.stringify(m?.blocks ?? "");
}

function thread(channel: string, ts: string): string[] {
  return h.emulator.workspace
    .replies(channel, ts)
    .filter((m) => m.ts !== ts)
    .map((m) => m.text ?? "");
}

describe("the live card", () => {
  it("moves NOT_STARTED → PREP_EVENT → IN_EVENT in one message; repeated and late states leave it", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Quarterly town hall",
      panelists: ["kei@example.com"],
      moderators: ["ada@example.com"],
    });
    const ts = await notify(event, CHANNELS.events);
    const posts = () =>
      h.emulator.calls.filter(
        (c) =>
          c.method === "chat.postMessage" &&
          c.args.channel === CHANNELS.events &&
          !c.args.thread_ts,
      );
    const control = h.sandbox.control;

    const ns = await control.setState(event.eventId, { state: "NOT_STARTED" });
    expect(ns.deliveries.map((d) => d.status)).toEqual([204]);
    await eventually(
      () => (cardOf(CHANNELS.events, ts).includes("Not started yet") ? true : undefined),
      "NOT_STARTED on the card",
    );

    await control.setState(event.eventId, { state: "PREP_EVENT" });
    await eventually(
      () => (cardOf(CHANNELS.events, ts).includes("Getting ready") ? true : undefined),
      "PREP_EVENT",
    );
    // Staff matched by e-mail show on the PREP_EVENT card.
    await control.attendees(event.eventId, {
      join: [
        { name: "Kei Organizer", email: "kei@example.com" },
        { name: "Ada Admin", email: "ada@example.com" },
        { name: "Somebody", email: "somebody@example.com" },
      ],
    });
    await eventually(() => {
      const card = cardOf(CHANNELS.events, ts);
      return card.includes("*Panelists in:* Kei Organizer") &&
        card.includes("*Moderators in:* Ada Admin")
        ? true
        : undefined;
    }, "staff on the card");

    await control.setState(event.eventId, { state: "IN_EVENT" });
    await eventually(
      () => (cardOf(CHANNELS.events, ts).includes("Live now") ? true : undefined),
      "IN_EVENT",
    );
    const updatesBefore = h.emulator.calls.filter((c) => c.method === "chat.update").length;

    // A retry of IN_EVENT and a late PREP_EVENT: acknowledged, and the card stays where it is.
    const late = await control.setState(event.eventId, { state: "PREP_EVENT" });
    expect(late.deliveries.map((d) => d.status)).toEqual([204]);
    await control.setState(event.eventId, { state: "IN_EVENT" });
    await new Promise((r) => setTimeout(r, 1_500));
    expect(cardOf(CHANNELS.events, ts)).toContain("Live now");
    expect(cardOf(CHANNELS.events, ts)).toContain("Attendees now *3* · peak *3* · unique *3*");
    const updates = h.emulator.calls.filter((c) => c.method === "chat.update");
    expect(updates.length).toBe(updatesBefore);
    // The shared event record names the card; the instance's state is the owner's (its saved
    // model, which LivePort.figures reads), no longer copied onto the event record.
    const rec = await h.app.store.events.get(TEAM, event.eventId);
    expect(rec?.cards[CHANNELS.events]?.ts).toBe(ts);
    const { live } = await loadEventLive(
      h.app.store.repository(liveRepo),
      h.app.store.repository(sessionsRepo),
      TEAM,
      event.eventId,
    );
    expect(
      [...live.instances.values()].filter((i) => i.state !== undefined).map((i) => i.state),
    ).toEqual(["IN_EVENT"]);
    expect((await h.app.deps.live.figures(TEAM, event.eventId))?.state).toBe("IN_EVENT");
    // One card message for the event in the channel, updated in place.
    expect(posts()).toHaveLength(1);
    for (const u of updates.filter((c) => c.args.channel === CHANNELS.events)) {
      expect(u.args.ts).toBe(ts);
    }

    // A new instance starts fresh.
    await control.setState(event.eventId, { state: "PREP_EVENT", instanceId: "second-run" });
    await eventually(() => {
      const card = cardOf(CHANNELS.events, ts);
      return card.includes("Getting ready") &&
        card.includes("Attendees now *0* · peak *0* · unique *0*")
        ? true
        : undefined;
    }, "the new instance");

    // Cancel: webhooks removed upstream per type, card marked.
    h.sandbox.control.clearLog();
    await onEventCancelled(h.app.deps, TEAM, event.eventId);
    await eventually(
      () => (cardOf(CHANNELS.events, ts).includes("Cancelled") ? true : undefined),
      "cancelled card",
    );
    const removed = h.sandbox.control
      .log()
      .filter((e) => e.method === "DELETE" && e.path.includes("/type/"))
      .map((e) => e.path.split("/").pop());
    expect(removed.sort()).toEqual(["ATTENDEE_INFO", "EVENT_STATE"]);
    const after = await control.setState(event.eventId, { state: "IN_EVENT" });
    expect(after.deliveries).toEqual([]);
  });

  it("turns 500 joins and 100 leaves into a few digests with exact counts", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "All hands burst",
    });
    const ts = await notify(event, CHANNELS.general);
    const townTs = await notify(event, CHANNELS.townHall, "counter");
    const control = h.sandbox.control;
    await control.setState(event.eventId, { state: "IN_EVENT" });
    const joins = await control.attendees(event.eventId, { count: 500, concurrency: 32 });
    expect(joins.delivered).toBe(500);
    const leaves = await control.attendees(event.eventId, {
      leave: joins.joined.slice(0, 100).map((a) => a.endpointGuid),
    });
    expect(leaves.delivered).toBe(100);
    await eventually(
      () => {
        const t = digestTotals(thread(CHANNELS.general, ts));
        return t.joined === 500 && t.left === 100 ? t : undefined;
      },
      "digests adding up to 500 / 100",
      20_000,
    );
    const digests = thread(CHANNELS.general, ts);
    expect(digests.length).toBeGreaterThanOrEqual(1);
    expect(digests.length).toBeLessThanOrEqual(8);
    expect(digests.at(-1)).toContain("Now 400 attending.");
    expect(digests.join("\n")).toMatch(/and \d+ others/);
    await eventually(
      () =>
        cardOf(CHANNELS.general, ts).includes("Attendees now *400* · peak *500* · unique *500*")
          ? true
          : undefined,
      "the card's figures",
    );
    // "Counter only": one thread message, updated in place.
    await eventually(() => {
      const t = thread(CHANNELS.townHall, townTs);
      return t.length === 1 && t[0]?.includes("So far 500 joined · 100 left · 400 attending now.")
        ? true
        : undefined;
    }, "the running count");
    // Attendee e-mails stay out unless the workspace allows them.
    expect(digests.join("\n")).not.toContain("@example.com");
  });

  it("mute stops the thread in that channel only", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Muted standup",
    });
    const tsEvents = await notify(event, CHANNELS.events);
    const tsTown = await notify(event, CHANNELS.townHall);
    const control = h.sandbox.control;
    await control.attendees(event.eventId, { join: [{ name: "First Person" }] });
    await eventually(
      () =>
        thread(CHANNELS.townHall, tsTown).some((t) => t.includes("First Person")) &&
        thread(CHANNELS.events, tsEvents).some((t) => t.includes("First Person"))
          ? true
          : undefined,
      "first digest in both channels",
    );
    const since = h.emulator.calls.length;
    await h.driver.slashCommand({
      user: USERS.omar,
      channel: CHANNELS.townHall,
      text: `mute ${event.eventId}`,
    });
    const reply = await h.emulator.waitForCall(
      (c) =>
        c.method === "response_url" &&
        String(c.args.text).includes(`mute ${event.eventId}`) === false &&
        String(c.args.text).includes(event.eventId),
      { since, timeoutMs: 5_000 },
    );
    expect(String(reply.args.text)).toContain("are off in");
    await control.attendees(event.eventId, { join: [{ name: "Second Person" }] });
    await eventually(
      () =>
        thread(CHANNELS.events, tsEvents).some((t) => t.includes("Second Person"))
          ? true
          : undefined,
      "second digest in the channel still notified",
    );
    await new Promise((r) => setTimeout(r, 500));
    expect(thread(CHANNELS.townHall, tsTown).some((t) => t.includes("Second Person"))).toBe(false);
    // The muted channel's card says so and keeps its figures; the other card moves on.
    await eventually(
      () =>
        cardOf(CHANNELS.townHall, tsTown).includes("Muted in this channel") ? true : undefined,
      "the muted card",
    );
    expect(cardOf(CHANNELS.townHall, tsTown)).toContain("unique *1*");
    await eventually(
      () => (cardOf(CHANNELS.events, tsEvents).includes("unique *2*") ? true : undefined),
      "the live card's figures",
    );
    expect(cardOf(CHANNELS.events, tsEvents)).not.toContain("Muted in this channel");

    // Muting the last channel removes the webhook upstream.
    h.sandbox.control.clearLog();
    await h.driver.slashCommand({
      user: USERS.omar,
      channel: CHANNELS.events,
      text: `mute ${event.eventId}`,
    });
    await eventually(
      () =>
        h.sandbox.control.log().filter((e) => e.method === "DELETE").length === 2
          ? true
          : undefined,
      "both webhook types removed",
    );
    const none = await control.attendees(event.eventId, { join: [{ name: "Third Person" }] });
    expect(none.delivered).toBe(0);
  });

  it("answers Attendance ephemerally and leaks no secret", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Attendance check",
    });
    const ts = await notify(event, CHANNELS.general);
    await h.sandbox.control.attendees(event.eventId, { count: 3 });
    await eventually(
      () => (cardOf(CHANNELS.general, ts).includes("unique *3*") ? true : undefined),
      "figures",
    );
    const since = h.emulator.calls.length;
    await h.driver.blockAction({
      user: USERS.member,
      channel: CHANNELS.general,
      message_ts: ts,
      action_id: "onair_card_attendance",
    });
    // In the channel where the button was pressed, not in the card's thread.
    const reply = await h.emulator.waitForCall((c) => c.method === "chat.postEphemeral", {
      since,
      timeoutMs: 5_000,
    });
    expect(reply.ok).toBe(true);
    expect(reply.args).toMatchObject({ channel: CHANNELS.general, user: USERS.member });
    expect(reply.args.thread_ts).toBeUndefined();
    expect(String(reply.args.text)).toMatch(/Peak \*3\* · unique \*3\* · here now \*3\*/);

    // Pressed again at once by three people: one snapshot of the attendees serves them all.
    const counted = async (source: string) =>
      (await h.app.deps.metrics.attendanceSnapshots.get()).values.find(
        (v) => v.labels.source === source,
      )?.value ?? 0;
    const [taken, reused] = [await counted("taken"), await counted("reused")];
    const again = h.emulator.calls.length;
    await Promise.all(
      [USERS.member, USERS.omar, USERS.kei].map((user) =>
        h.driver.blockAction({
          user,
          channel: CHANNELS.general,
          message_ts: ts,
          action_id: "onair_card_attendance",
        }),
      ),
    );
    await eventually(
      () =>
        h.emulator.calls.slice(again).filter((c) => c.method === "chat.postEphemeral" && c.ok)
          .length === 3
          ? true
          : undefined,
      "three answers",
    );
    expect((await counted("taken")) + (await counted("reused"))).toBe(taken + reused + 3);
    expect(await counted("taken")).toBeLessThanOrEqual(taken + 1);

    const scanner = createSecretScanner();
    for (const line of h.logs) scanner.add("log", line);
    for (const c of h.emulator.calls) scanner.add(`slack ${c.method}`, JSON.stringify(c.args));
    scanner.assertNoSecrets([...h.secrets, "sandbox-secret"]);
  });

  it("a muted card says it is muted and keeps the figures of that moment", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Muted webinar",
    });
    const ts = await notify(event, CHANNELS.general);
    await h.sandbox.control.setState(event.eventId, { state: "IN_EVENT" });
    await h.sandbox.control.attendees(event.eventId, { count: 4 });
    await eventually(
      () => (cardOf(CHANNELS.general, ts).includes("unique *4*") ? true : undefined),
      "figures",
    );
    await h.driver.slashCommand({
      user: USERS.omar,
      channel: CHANNELS.general,
      text: `mute ${event.eventId}`,
    });
    await eventually(
      () => (cardOf(CHANNELS.general, ts).includes("Muted in this channel") ? true : undefined),
      "the muted card",
    );
    expect(cardOf(CHANNELS.general, ts)).toContain("now *4* · peak *4* · unique *4*");
    // Its webhooks went with its last channel: the service tells the app nothing more.
    const later = await h.sandbox.control.attendees(event.eventId, { count: 2 });
    expect(later.delivered).toBe(0);
    expect(cardOf(CHANNELS.general, ts)).toContain("unique *4*");
  });

  it("posts nothing for a team after uninstall: its webhooks find no subscription", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Before uninstall",
    });
    await notify(event, CHANNELS.general);
    await h.driver.uninstall();
    await eventually(
      async () =>
        (await h.app.store.subscriptions.forEvent(TEAM, event.eventId)).length === 0
          ? true
          : undefined,
      "the team's subscriptions deleted",
    );
    // The route's cache holds a subscription for at most a second.
    await new Promise((r) => setTimeout(r, 1_100));
    const since = h.emulator.calls.length;
    const res = await h.sandbox.control.attendees(event.eventId, {
      join: [{ name: "Late Comer" }],
    });
    expect(res.failures.map((f) => f.status)).toEqual([404]);
    await new Promise((r) => setTimeout(r, 500));
    // The engine may still be at the event's reminders as the uninstall lands (scheduling one
    // it planned before, or deleting those scheduled once it reads the subscription gone): each
    // refused, the token revoked. Nothing else is called, nothing posts, nothing for the late
    // comer.
    const chat = h.emulator.calls.slice(since).filter((c) => c.method.startsWith("chat."));
    for (const c of chat) {
      expect([
        "chat.scheduleMessage token_revoked",
        "chat.deleteScheduledMessage token_revoked",
      ]).toContain(`${c.method} ${c.error}`);
    }
    // At most one a channel: a refused token blocks the channel's lane.
    expect(new Set(chat.map((c) => c.args.channel)).size).toBe(chat.length);
    expect(JSON.stringify(chat.map((c) => c.args))).not.toContain("Late Comer");
  });
});
