import { autolinkedUrls, type CallRecord } from "@onair/slack-emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CANCEL_ACTIONS, EVENT_FIELDS as F, TOKEN_FIELDS as T, VIEWS } from "../../src/ids.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { notifyCard } from "../helpers/live-card.ts";
import { eventually, seedEvent } from "../helpers/live-fixtures.ts";
import { commandOpensModal, future, scheduleViaForm, waitFor } from "./organizer-helpers.ts";

/**
 * A hostile workspace member, through the real routes (signed requests from the emulator's
 * driver, the real Bolt app, a real store): each finding of the attack, and that it holds.
 */

const HOSTILE = "Q4 <!channel> <!here> <https://evil.example|click> <@U0KEI0ORG>";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  const s = await h.app.store.settings.getOrDefault(TEAM);
  await h.app.store.settings.put(TEAM, { ...s, auditChannel: CHANNELS.audit });
});
afterAll(async () => {
  await h?.close();
});

/** Broadcasts, mentions or links a message would make of the hostile title. */
function smuggled(text: string): string[] {
  return [...text.matchAll(/<(!channel|!here|!everyone|https:\/\/evil[^>]*|@U0KEI0ORG)>/g)].map(
    (m) => m[0],
  );
}

/** The mrkdwn of a message's blocks (plain_text is shown as typed and parses nothing). */
function mrkdwnTexts(blocks: unknown): string {
  const out: string[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") {
      const o = v as Record<string, unknown>;
      if (o.type === "mrkdwn" && typeof o.text === "string") out.push(o.text);
      Object.values(o).forEach(walk);
    }
  };
  walk(blocks);
  return out.join("\n");
}

function auditPosts(since: number): CallRecord[] {
  return h.emulator.calls
    .slice(since)
    .filter((c) => c.method === "chat.postMessage" && c.args.channel === CHANNELS.audit);
}

async function reply(user: string, channel: string, text: string): Promise<string> {
  const since = h.emulator.calls.length;
  await h.driver.slashCommand({ user, channel, text });
  const call = await waitFor(
    h,
    (c) => c.method === "response_url" && String(c.args.text ?? "").length > 0,
    since,
  );
  return String(call.args.text);
}

describe("a hostile member", () => {
  it("cannot ping the audit channel through an event title (schedule, edit, cancel)", async () => {
    const since = h.emulator.calls.length;
    const eventId = await scheduleViaForm(h, USERS.omar, CHANNELS.general, HOSTILE, future(2));
    await eventually(() => (auditPosts(since).length >= 1 ? true : undefined), "audit line");
    const [scheduled] = auditPosts(since);
    const text = String(scheduled?.args.text);
    expect(text).toContain("scheduled");
    expect(text).toContain("&lt;!channel&gt;");
    expect(smuggled(text)).toEqual([]);

    // Cancel: the confirmation's red yes, audited with the same title.
    const before = auditPosts(since).length;
    await commandOpensModal(h, USERS.omar, CHANNELS.general, `cancel ${eventId}`, VIEWS.cancel);
    await h.driver.blockAction({ user: USERS.omar, action_id: CANCEL_ACTIONS.yes });
    await eventually(() => (auditPosts(since).length > before ? true : undefined), "cancel line");
    for (const c of auditPosts(since)) expect(smuggled(String(c.args.text))).toEqual([]);
  });

  it("cannot ping the audit channel through a token's client name", async () => {
    const since = h.emulator.calls.length;
    await commandOpensModal(h, USERS.admin, CHANNELS.general, "token", VIEWS.token);
    await h.driver.viewSubmission({
      user: USERS.admin,
      values: { [T.duration]: "day", [T.clientName]: HOSTILE.slice(0, 100) },
    });
    await eventually(
      () => (auditPosts(since).some((c) => /minted/.test(String(c.args.text))) ? true : undefined),
      "mint line",
    );
    for (const c of auditPosts(since)) expect(smuggled(String(c.args.text))).toEqual([]);
  });

  it("cannot ping a channel through the live card's notification text", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: HOSTILE,
    });
    const since = h.emulator.calls.length;
    await reply(USERS.omar, CHANNELS.events, `notify ${event.eventId}`);
    const card = await waitFor(
      h,
      (c) => c.method === "chat.postMessage" && c.args.channel === CHANNELS.events,
      since,
    );
    expect(String(card.args.text)).toContain("&lt;!here&gt;");
    expect(smuggled(String(card.args.text))).toEqual([]);
    expect(smuggled(mrkdwnTexts(card.args.blocks))).toEqual([]);
  });

  it("cannot bring a page's preview or a link into the channel through an attendee's name or a title", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      // Over 150 characters: the header shows it cut, the card's context in full (mrkdwn).
      title: `Prizes at https://evil.example/win. ${"Open webinar. ".repeat(12)}`,
    });
    const ts = await notifyCard(h, event, CHANNELS.events, "every");
    const card = h.emulator.workspace.topLevel(CHANNELS.events).find((m) => m.ts === ts);
    expect(JSON.stringify(card?.blocks)).toContain("Full title:");
    expect(JSON.stringify(card?.blocks)).toContain("evil.example/win");
    expect(autolinkedUrls(card!)).toEqual([]);
    const since = h.emulator.calls.length;
    await h.sandbox.control.setState(event.eventId, { state: "IN_EVENT" });
    await h.sandbox.control.attendees(event.eventId, {
      join: [{ name: "https://evil.example/x.gif" }, { name: "www.evil.example/free" }],
    });
    const digest = await eventually(
      () =>
        h.emulator.workspace
          .replies(CHANNELS.events, ts)
          .find((m) => String(m.text).includes("evil.example/x.gif")),
      "the digest naming them",
      15_000,
    );
    // Shown as text: nothing Slack would link on its own, no preview asked for.
    expect(autolinkedUrls(digest)).toEqual([]);
    const posts = h.emulator.calls
      .slice(since)
      .filter((c) => c.method === "chat.postMessage" && c.args.channel === CHANNELS.events);
    expect(posts.length).toBeGreaterThan(0);
    for (const p of posts) {
      // Form-encoded by the WebClient: "false".
      expect([String(p.args.unfurl_links), String(p.args.unfurl_media)]).toEqual([
        "false",
        "false",
      ]);
    }

    // The report in the thread names the title too: as verbatim blocks, not a file comment
    // (message text, which Slack links).
    await h.sandbox.control.setState(event.eventId, { state: "NOT_STARTED" });
    const report = await eventually(
      () => h.emulator.workspace.replies(CHANNELS.events, ts).find((m) => Array.isArray(m.files)),
      "the attendance report",
      20_000,
    );
    expect(autolinkedUrls(report)).toEqual([]);
    expect(JSON.stringify(report.blocks)).toContain("evil.example/win");
  });

  it("cannot send an event's live card into a channel they are not in", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Not yours to announce",
    });
    const townHall = h.emulator.workspace.channels.get(CHANNELS.townHall);
    if (!townHall) throw new Error("no #town-hall in the seed");
    townHall.members.delete(USERS.omar);
    try {
      const since = h.emulator.calls.length;
      const text = await reply(USERS.omar, CHANNELS.events, `notify ${event.eventId} #town-hall`);
      expect(text).toContain("only send live notices to a channel you're a member of");
      await new Promise((r) => setTimeout(r, 500));
      const touched = h.emulator.calls
        .slice(since)
        .filter(
          (c) =>
            c.args.channel === CHANNELS.townHall &&
            ["conversations.join", "chat.postMessage", "chat.scheduleMessage"].includes(c.method),
        );
      expect(touched).toEqual([]);
      const record = await h.app.store.events.get(TEAM, event.eventId);
      expect(record?.subscriptions).toEqual([]);

      // A workspace admin may.
      const ok = await reply(USERS.admin, CHANNELS.events, `notify ${event.eventId} #town-hall`);
      expect(ok).toContain("now go to");
    } finally {
      townHall.members.add(USERS.omar);
    }
  });

  it("cannot pick a channel they are not in on the schedule form (inline error, nothing created)", async () => {
    const townHall = h.emulator.workspace.channels.get(CHANNELS.townHall);
    if (!townHall) throw new Error("no #town-hall in the seed");
    townHall.members.delete(USERS.omar);
    try {
      await commandOpensModal(h, USERS.omar, CHANNELS.events, "schedule", VIEWS.event);
      h.sandbox.control.clearLog();
      const start = future(3);
      const res = await h.driver.viewSubmission({
        user: USERS.omar,
        values: {
          [F.title]: "Sneaky announcement",
          [F.start]: new Date(start),
          [F.end]: new Date(start + 3_600_000),
          [F.channel]: CHANNELS.townHall,
        },
      });
      expect(res.outcome).toMatchObject({
        action: "errors",
        errors: { [F.channel]: expect.stringMatching(/channel you're a member of/) },
      });
      expect(h.sandbox.control.log().filter((e) => e.method === "POST")).toEqual([]);
      await h.driver.viewClosed({ user: USERS.omar });
    } finally {
      townHall.members.add(USERS.omar);
    }
  });

  it("cannot mute someone else's event, in any channel", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Keep it loud",
    });
    await reply(USERS.omar, CHANNELS.events, `notify ${event.eventId}`);
    h.sandbox.control.clearLog();
    const text = await reply(USERS.member, CHANNELS.events, `mute ${event.eventId}`);
    expect(text).toContain("Only the event's organizer");
    const record = await h.app.store.events.get(TEAM, event.eventId);
    const sub = await h.app.store.subscriptions.get(record?.subscriptions.at(-1) ?? "");
    expect(sub?.channels).toEqual([CHANNELS.events]);
    expect(h.sandbox.control.log().filter((e) => e.method === "DELETE")).toEqual([]);
  });

  it("cannot mint a token longer than the policy allows with a pairing code", async () => {
    const s = await h.app.store.settings.getOrDefault(TEAM);
    await h.app.store.settings.put(TEAM, { ...s, longestTokenMs: 2 * 3_600_000 });
    try {
      await commandOpensModal(h, USERS.admin, CHANNELS.general, "token", VIEWS.token);
      h.sandbox.control.clearLog();
      const res = await h.driver.viewSubmission({
        user: USERS.admin,
        values: { [T.duration]: "custom", [T.customHours]: "1", [T.pairingCode]: "PAIR-1" },
      });
      expect(res.outcome).toMatchObject({
        action: "errors",
        errors: { [T.pairingCode]: expect.stringMatching(/lasts 1 day, longer than .*2 hours/) },
      });
      expect(h.sandbox.control.log().filter((e) => e.service === "relay")).toEqual([]);
      await h.driver.viewClosed({ user: USERS.admin });
    } finally {
      await h.app.store.settings.put(TEAM, s);
    }
  });
});
