import type { CallRecord } from "@onair/slack-emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildManifest } from "../../manifest/manifest.ts";
import { eventOf } from "../../src/domain/subscription.ts";
import { subscriptionOf } from "../../src/domain/subscriptions.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { eventually, type SeededEvent, seedEvent } from "../helpers/live-fixtures.ts";

/**
 * Live unfurls: a join link of an event this workspace knows, pasted in a channel, gets a compact
 * card with the event's state and attendees now (link_shared → chat.unfurl); any other link on
 * the same host gets nothing. The emulator sends link_shared only for the manifest's domains.
 */

let h: Harness;
const domains = buildManifest("https://onair.example.com").features.unfurl_domains;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const cardUnfurl = (c: CallRecord) => c.method === "chat.unfurl" && c.args.unfurls !== undefined;

async function joinLinkOf(event: SeededEvent): Promise<{ link: string; start: number }> {
  await h.driver.slashCommand({
    user: USERS.omar,
    channel: CHANNELS.events,
    text: `notify ${event.eventId} <#${CHANNELS.events}|x>`,
    escaped: true,
  });
  return eventually(async () => {
    const rec = await h.app.store.events.get(TEAM, event.eventId);
    const sub = rec ? await subscriptionOf(h.app.deps, rec) : undefined;
    const e = sub ? eventOf(sub.sub) : undefined;
    return e?.attendeeUrl ? { link: `https://${e.attendeeUrl}`, start: e.start } : undefined;
  }, "the event's join link");
}

describe("live unfurls", () => {
  it("unfurls a known event's join link with its live state; an unknown one gets nothing", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Unfurl <b>town</b> hall",
    });
    const { link, start } = await joinLinkOf(event);
    expect(domains).toContain(new URL(link).hostname);
    await h.sandbox.control.setState(event.eventId, { state: "IN_EVENT" });
    await h.sandbox.control.attendees(event.eventId, { count: 2 });
    await eventually(
      async () =>
        (await h.app.deps.live.figures(TEAM, event.eventId))?.present === 2 ? true : undefined,
      "two attendees in",
    );

    const since = h.emulator.calls.length;
    const shared = await h.driver.postMessage({
      user: USERS.member,
      channel: CHANNELS.events,
      text: `We are live, join: <${link}>`,
      unfurlDomains: domains,
    });
    expect(shared.result?.status).toBe(200);
    // Work Objects are off in the emulator, as on a new app: the card is the unfurl.
    const call = await h.emulator.waitForCall(cardUnfurl, {
      since,
      timeoutMs: 5_000,
    });
    expect(call.ok).toBe(true);
    const msg = h.emulator.workspace
      .replies(CHANNELS.events, shared.ts)
      .concat(h.emulator.workspace.topLevel(CHANNELS.events))
      .find((m) => m.ts === shared.ts);
    const unfurl = JSON.stringify(msg?.unfurls?.[link] ?? "");
    expect(unfurl).toContain("Unfurl &lt;b&gt;town&lt;/b&gt; hall");
    expect(unfurl).toContain("Live now");
    expect(unfurl).toContain("attendees now *2*");
    expect(unfurl).toContain(`<!date^${Math.floor(start / 1000)}^`);

    // Pasted where the card is not (a channel the event does not notify): the state, but not
    // who is in, which is the organizer's, the admins' and the card channels' to see.
    const elsewhereSince = h.emulator.calls.length;
    const elsewhere = await h.driver.postMessage({
      user: USERS.member,
      channel: CHANNELS.general,
      text: `Join us: <${link}>`,
      unfurlDomains: domains,
    });
    expect(elsewhere.result?.status).toBe(200);
    const elsewhereCall = await h.emulator.waitForCall(cardUnfurl, {
      since: elsewhereSince,
      timeoutMs: 5_000,
    });
    expect(elsewhereCall.ok).toBe(true);
    const elsewhereMsg = h.emulator.workspace
      .topLevel(CHANNELS.general)
      .find((m) => m.ts === elsewhere.ts);
    const elsewhereUnfurl = JSON.stringify(elsewhereMsg?.unfurls?.[link] ?? "");
    expect(elsewhereUnfurl).toContain("Live now");
    expect(elsewhereUnfurl).not.toContain("attendees now");

    // The same host, a link that is no known event's: link_shared arrives, nothing is unfurled.
    const before = h.emulator.calls.length;
    const unknown = await h.driver.postMessage({
      user: USERS.member,
      channel: CHANNELS.events,
      text: `Try <https://${new URL(link).hostname}/999999999>`,
      unfurlDomains: domains,
    });
    expect(unknown.result?.status).toBe(200);
    await h.driver.settled();
    await new Promise((r) => setTimeout(r, 500));
    expect(h.emulator.calls.slice(before).filter((c) => c.method === "chat.unfurl")).toEqual([]);

    // A link on another host is never sent to the app at all.
    const other = await h.driver.postMessage({
      user: USERS.member,
      channel: CHANNELS.events,
      text: "<https://elsewhere.example.org/1>",
      unfurlDomains: domains,
    });
    expect(other.result).toBeUndefined();
  });
});
