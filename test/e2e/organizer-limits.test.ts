import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VIEWS } from "../../src/ids.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import {
  commandOpensModal,
  expectAllPayloadsValid,
  future,
  userToken,
  viewOf,
  waitFor,
} from "./organizer-helpers.ts";

let h: Harness;
let eventId = "";
const TITLE = `Very long title ${"abcdefghij".repeat(1000)}`.slice(0, 10_000);

beforeAll(async () => {
  h = await startHarness();
  // An event made outside the form (the form refuses such a title): 10,000 characters, 500 panelists.
  const t = await userToken(h, "omar@example.com");
  await h.app.store.users.put(TEAM, USERS.omar, {
    email: "omar@example.com",
    userId: t.userId,
    enterpriseId: t.enterpriseId,
  });
  const start = future(3);
  const { id } = await h.app.deps.events.createEvent(t.accessToken, t.userId, {
    title: TITLE,
    start,
    end: start + 3_600_000,
    timezone: "Europe/Berlin",
    panelists: Array.from({ length: 500 }, (_, i) => ({ email: `panelist${i}@example.com` })),
    moderators: [{ email: "kei@example.com" }],
  });
  eventId = id;
  await h.app.store.events.put({
    team: TEAM,
    eventId: id,
    organizer: USERS.omar,
    title: TITLE,
    start,
    subscriptions: [],
    cards: {},
    instances: {},
    createdAt: Date.now(),
  });
});
afterAll(async () => {
  await h?.close();
});

async function response(text: string) {
  const since = h.emulator.calls.length;
  await h.driver.slashCommand({ user: USERS.omar, channel: CHANNELS.general, text });
  return waitFor(h, (c) => c.method === "response_url", since);
}

describe("a 10,000-character title and 500 panelists", () => {
  it("show: valid blocks, shortened, with a note and the count", async () => {
    const call = await response(`show ${eventId}`);
    const text = JSON.stringify(call.args.blocks);
    expect(text).toContain("10000 characters long");
    expect(text).toContain("500 in all");
  });

  it("list: valid blocks", async () => {
    const call = await response("list");
    expect(JSON.stringify(call.args.blocks)).toContain("Very long title");
  });

  it("edit: a valid form; the people list is left as it is, with a note", async () => {
    const call = await commandOpensModal(
      h,
      USERS.omar,
      CHANNELS.general,
      `edit ${eventId}`,
      VIEWS.event,
    );
    const text = JSON.stringify(viewOf(call).blocks);
    expect(text).toContain("500 people");
    expect(text).toContain("shortened here");
    await h.driver.viewClosed({ user: USERS.omar });
  });

  it("cancel confirmation and App Home: valid views", async () => {
    await commandOpensModal(h, USERS.omar, CHANNELS.general, `cancel ${eventId}`, VIEWS.cancel);
    await h.driver.viewClosed({ user: USERS.omar });
    const since = h.emulator.calls.length;
    await h.driver.event({ type: "app_home_opened", user: USERS.omar, tab: "home" });
    await waitFor(h, (c) => c.method === "views.publish", since);
  });

  it("every payload passed the emulator's Block Kit limits", () => {
    expect(h.emulator.calls.length).toBeGreaterThan(5);
    expectAllPayloadsValid(h);
  });
});

describe("App Home for an admin", () => {
  it("has a settings button that opens the core's settings modal", async () => {
    const since = h.emulator.calls.length;
    await h.driver.event({ type: "app_home_opened", user: USERS.admin, tab: "home" });
    const home = await waitFor(
      h,
      (c) => c.method === "views.publish" && c.args.user_id === USERS.admin,
      since,
    );
    expect(JSON.stringify(viewOf(home))).toContain("onair_home_settings");
    expect(JSON.stringify(viewOf(home))).toContain("Live relay tokens");
    const s2 = h.emulator.calls.length;
    await h.driver.blockAction({ user: USERS.admin, action_id: "onair_home_settings" });
    // The modal opens at once with a placeholder, which the settings form replaces.
    const open = await waitFor(h, (c) => c.method === "views.open", s2);
    expect(open.ok).toBe(true);
    const filled = await waitFor(
      h,
      (c) => c.method === "views.update" && viewOf(c).callback_id === "onair_settings",
      s2,
    );
    expect(filled.ok).toBe(true);
    await h.driver.viewClosed({ user: USERS.admin });
  });

  it("a member's Home has neither settings nor minting", async () => {
    const since = h.emulator.calls.length;
    await h.driver.event({ type: "app_home_opened", user: USERS.member, tab: "home" });
    const home = await waitFor(
      h,
      (c) => c.method === "views.publish" && c.args.user_id === USERS.member,
      since,
    );
    const text = JSON.stringify(viewOf(home));
    expect(text).not.toContain("onair_home_settings");
    expect(text).not.toContain("onair_home_token");
    expect(text).toContain("onair_home_schedule");
  });
});
