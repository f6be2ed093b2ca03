import {
  type CallRecord,
  flexpanesFor,
  type Json,
  openWorkObject,
  pressFlexpaneAction,
  setWorkObjects,
  workObjectsOf,
} from "@onair/slack-emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildManifest } from "../../manifest/manifest.ts";
import { eventOf } from "../../src/domain/subscription.ts";
import { subscriptionOf } from "../../src/domain/subscriptions.ts";
import { CARD_ACTIONS } from "../../src/ids.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { eventually, type SeededEvent, seedEvent } from "../helpers/live-fixtures.ts";

/**
 * A join link as a Work Object (README: "Live unfurls"): the unfurl
 * (chat.unfurl metadata.entities) everyone in the conversation sees, and the flexpane
 * (entity_details_requested → entity.presentDetails) each person sees: the organizer everything,
 * a member of a channel the event notifies the figures but not the staff links, a member
 * elsewhere neither, without an error. Its buttons go through the card's own checks. Where Slack
 * refuses Work Objects, the link unfurls once as the card, never both.
 */

const domains = buildManifest("https://onair.example.com").features.unfurl_domains;
let h: Harness;
let event: SeededEvent;
let link: string;
let start: number;

type Field = { key: string; value?: unknown; user?: { user_id: string }; link?: string };
const fieldsOf = (e: Json | undefined): Field[] =>
  ((e?.entity_payload as { custom_fields?: Field[] } | undefined)?.custom_fields ?? []) as Field[];
const field = (e: Json | undefined, key: string) => fieldsOf(e).find((f) => f.key === key);
const unfurlCalls = (since: number) =>
  h.emulator.calls.slice(since).filter((c) => c.method === "chat.unfurl");

async function joinLinkOf(hh: Harness, ev: SeededEvent): Promise<{ link: string; start: number }> {
  await hh.driver.slashCommand({
    user: USERS.omar,
    channel: CHANNELS.events,
    text: `notify ${ev.eventId} <#${CHANNELS.events}|x>`,
    escaped: true,
  });
  return eventually(async () => {
    const rec = await hh.app.store.events.get(TEAM, ev.eventId);
    const sub = rec ? await subscriptionOf(hh.app.deps, rec) : undefined;
    const e = sub ? eventOf(sub.sub) : undefined;
    return e?.attendeeUrl ? { link: `https://${e.attendeeUrl}`, start: e.start } : undefined;
  }, "the event's join link");
}

async function share(hh: Harness, channel: string): Promise<{ ts: string; since: number }> {
  const since = hh.emulator.calls.length;
  const shared = await hh.driver.postMessage({
    user: USERS.member,
    channel,
    text: `Join us: <${link}>`,
    unfurlDomains: domains,
  });
  expect(shared.result?.status).toBe(200);
  return { ts: shared.ts, since };
}

async function flexpane(user: string, channel: string, ts: string): Promise<Json | undefined> {
  const since = h.emulator.calls.length;
  const opened = await openWorkObject(h.driver, h.emulator.workspace, {
    user,
    channel,
    message_ts: ts,
    url: link,
  });
  expect(opened.status).toBe(200);
  const call = await h.emulator.waitForCall((c) => c.method === "entity.presentDetails", {
    since,
    timeoutMs: 5_000,
  });
  expect(call.ok).toBe(true);
  const shown = flexpanesFor(h.emulator.workspace, user).at(-1);
  expect(shown?.triggerId).toBe(opened.triggerId);
  expect(shown?.error).toBeUndefined();
  return shown?.metadata;
}

beforeAll(async () => {
  h = await startHarness();
  setWorkObjects(h.emulator.workspace, { enabled: true });
  event = await seedEvent(h.app.deps, {
    team: TEAM,
    organizer: USERS.omar,
    title: "Quarterly <b>town</b> hall",
  });
  ({ link, start } = await joinLinkOf(h, event));
  await h.sandbox.control.setState(event.eventId, { state: "IN_EVENT" });
  await h.sandbox.control.attendees(event.eventId, { count: 3 });
  await eventually(
    async () =>
      (await h.app.deps.live.figures(TEAM, event.eventId))?.present === 3 ? true : undefined,
    "three attendees in",
  );
});
afterAll(async () => {
  await h?.close();
});

describe("a join link's Work Object", () => {
  let inEvents: string;
  let inGeneral: string;

  it("unfurls as a Work Object: the event id, the URL as posted, state, start, organizer; attendees now only in a notified channel", async () => {
    const here = await share(h, CHANNELS.events);
    inEvents = here.ts;
    const call = await h.emulator.waitForCall(
      (c) => c.method === "chat.unfurl" && c.args.metadata !== undefined,
      { since: here.since, timeoutMs: 5_000 },
    );
    expect(call.ok).toBe(true);
    expect(call.warnings).toBeUndefined();
    const wo = workObjectsOf(h.emulator.workspace, CHANNELS.events, inEvents)[link];
    expect(wo).toMatchObject({
      entity_type: "slack#/entities/item",
      external_ref: { id: event.eventId },
      app_unfurl_url: link,
      entity_payload: { attributes: { title: { text: "Quarterly <b>town</b> hall" } } },
    });
    expect(field(wo, "state")?.value).toBe("Live now");
    expect(field(wo, "start")?.value).toBe(Math.floor(start / 1000));
    expect(field(wo, "organizer")?.user).toEqual({ user_id: USERS.omar });
    expect(field(wo, "present")?.value).toBe(3);

    const elsewhere = await share(h, CHANNELS.general);
    inGeneral = elsewhere.ts;
    await h.emulator.waitForCall(
      (c) => c.method === "chat.unfurl" && c.args.metadata !== undefined,
      { since: elsewhere.since, timeoutMs: 5_000 },
    );
    const woElsewhere = workObjectsOf(h.emulator.workspace, CHANNELS.general, inGeneral)[link];
    expect(field(woElsewhere, "state")?.value).toBe("Live now");
    expect(field(woElsewhere, "present")).toBeUndefined();
    expect(JSON.stringify(woElsewhere)).not.toContain("moderator");

    // Taken as a Work Object: no card besides it.
    await h.driver.settled();
    await new Promise((r) => setTimeout(r, 300));
    expect(unfurlCalls(here.since).filter((c) => c.args.unfurls !== undefined)).toEqual([]);
    const msg = h.emulator.workspace.topLevel(CHANNELS.events).find((m) => m.ts === inEvents);
    expect(msg?.unfurls).toBeUndefined();
  });

  it("the organizer's flexpane: figures, next occurrences, join, moderator and panelist links, both actions", async () => {
    const fp = await flexpane(USERS.omar, CHANNELS.general, inGeneral);
    expect(fp?.external_ref).toEqual({ id: event.eventId, type: "live_event" });
    expect(field(fp, "present")?.value).toBe(3);
    expect(field(fp, "join")?.link).toBe(link);
    expect(field(fp, "moderator_link")?.link).toMatch(/^https:\/\//);
    expect(field(fp, "panelist_link")?.link).toMatch(/^https:\/\//);
    expect(field(fp, "upcoming")?.value).toEqual([
      { type: "slack#/types/timestamp", value: Math.floor(start / 1000) },
    ]);
    const actions = (fp?.entity_payload as { actions?: { primary_actions?: Json[] } } | undefined)
      ?.actions;
    expect(actions?.primary_actions?.map((a) => [a.action_id, a.value])).toEqual([
      [CARD_ACTIONS.notify, event.eventId],
      [CARD_ACTIONS.attendance, event.eventId],
    ]);
  });

  it("a member in a notified channel: the figures, not the staff links", async () => {
    const fp = await flexpane(USERS.member, CHANNELS.events, inEvents);
    expect(field(fp, "present")?.value).toBe(3);
    expect(field(fp, "join")?.link).toBe(link);
    expect(field(fp, "moderator_link")).toBeUndefined();
    expect(field(fp, "panelist_link")).toBeUndefined();
  });

  it("a member elsewhere: the flexpane without the figures or staff links, never an error", async () => {
    const fp = await flexpane(USERS.member, CHANNELS.general, inGeneral);
    expect(field(fp, "state")?.value).toBe("Live now");
    expect(field(fp, "join")?.link).toBe(link);
    expect(field(fp, "present")).toBeUndefined();
    expect(field(fp, "moderator_link")).toBeUndefined();
    expect(JSON.stringify(fp)).not.toContain('"peak"');
  });

  it("the flexpane's buttons go through the card's checks of who may", async () => {
    const answerTo = async (user: string, action: string, channel: string, ts: string) => {
      await flexpane(user, channel, ts);
      const since = h.emulator.calls.length;
      const pressed = await pressFlexpaneAction(h.driver, h.emulator.workspace, {
        user,
        action_id: action,
      });
      expect(pressed.status).toBe(200);
      return h.emulator.waitForCall(
        (c: CallRecord) =>
          (c.method === "chat.postEphemeral" && c.args.user === user) || c.method === "views.open",
        { since, timeoutMs: 5_000 },
      );
    };
    // Attendance from elsewhere: refused, as the card's button pressed from there would be.
    const refused = await answerTo(
      USERS.member,
      CARD_ACTIONS.attendance,
      CHANNELS.general,
      inGeneral,
    );
    expect(refused.method).toBe("chat.postEphemeral");
    expect(JSON.stringify(refused.args)).toContain("Attendance is shown in the channels");
    // From the notified channel: the figures.
    const shown = await answerTo(USERS.member, CARD_ACTIONS.attendance, CHANNELS.events, inEvents);
    expect(JSON.stringify(shown.args)).toMatch(/Peak \*3\*/);
    // Notify this channel: the organizer gets the form for this channel, a member a refusal in
    // it (the form opens at once, then says who may).
    const filled = async (user: string) => {
      const since = h.emulator.calls.length;
      const opened = await answerTo(user, CARD_ACTIONS.notify, CHANNELS.general, inGeneral);
      expect(opened.method).toBe("views.open");
      const update = await h.emulator.waitForCall((c) => c.method === "views.update", {
        since,
        timeoutMs: 5_000,
      });
      return JSON.stringify(update.args.view);
    };
    expect(await filled(USERS.omar)).toContain(CHANNELS.general);
    expect(await filled(USERS.member)).toContain("Only the event's organizer");
  });

  it("where Slack drops the Work Object (ok with a warning), the link unfurls once as the card", async () => {
    setWorkObjects(h.emulator.workspace, { enabled: false, refusal: "warning" });
    try {
      const here = await share(h, CHANNELS.events);
      const card = await h.emulator.waitForCall(
        (c) => c.method === "chat.unfurl" && c.args.unfurls !== undefined,
        { since: here.since, timeoutMs: 5_000 },
      );
      expect(card.ok).toBe(true);
      await h.driver.settled();
      const calls = unfurlCalls(here.since);
      expect(
        calls.map((c) => [c.args.metadata !== undefined, c.args.unfurls !== undefined]),
      ).toEqual([
        [true, false],
        [false, true],
      ]);
      expect(workObjectsOf(h.emulator.workspace, CHANNELS.events, here.ts)).toEqual({});
      const msg = h.emulator.workspace.topLevel(CHANNELS.events).find((m) => m.ts === here.ts);
      const unfurl = JSON.stringify(msg?.unfurls?.[link] ?? "");
      expect(unfurl).toContain("Quarterly &lt;b&gt;town&lt;/b&gt; hall");
      expect(unfurl).toContain("attendees now *3*");
    } finally {
      setWorkObjects(h.emulator.workspace, { enabled: true, refusal: "warning" });
    }
  });
});

describe("Work Objects refused with an error", () => {
  it("unfurls the card once, and sends the card straight away for the next link", async () => {
    const hh = await startHarness();
    try {
      setWorkObjects(hh.emulator.workspace, { enabled: false, refusal: "error" });
      const ev = await seedEvent(hh.app.deps, { team: TEAM, organizer: USERS.omar, title: "Demo" });
      const { link: l } = await joinLinkOf(hh, ev);
      const post = async () => {
        const since = hh.emulator.calls.length;
        const shared = await hh.driver.postMessage({
          user: USERS.member,
          channel: CHANNELS.events,
          text: `<${l}>`,
          unfurlDomains: domains,
        });
        await hh.emulator.waitForCall(
          (c) => c.method === "chat.unfurl" && c.args.unfurls !== undefined,
          { since, timeoutMs: 5_000 },
        );
        await hh.driver.settled();
        const calls = hh.emulator.calls.slice(since).filter((c) => c.method === "chat.unfurl");
        const msg = hh.emulator.workspace.topLevel(CHANNELS.events).find((m) => m.ts === shared.ts);
        expect(JSON.stringify(msg?.unfurls?.[l] ?? "")).toContain("Demo");
        expect(workObjectsOf(hh.emulator.workspace, CHANNELS.events, shared.ts)).toEqual({});
        return calls.map((c) => [c.args.metadata !== undefined, c.ok, c.error ?? null]);
      };
      expect(await post()).toEqual([
        [true, false, "invalid_metadata_format"],
        [false, true, null],
      ]);
      expect(await post()).toEqual([[false, true, null]]);
    } finally {
      await hh.close();
    }
  });
});
