import type { WebClient } from "@slack/web-api";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { mentionsInText, type Notification, type SlackEmulator } from "../src/index.ts";
import { emulatorWithBot } from "./helpers.ts";

// Who each message would notify, from its mrkdwn as Slack parses it.

const ADA = "U0ADA0ADMIN";
const OMAR = "U0OMAR0ORG";
const KEI = "U0KEI0ORG";
const MIA = "U0MIA0MEMBER";
const GENERAL = "C0GENERAL";
const EVENTS = "C0EVENTS"; // Ada, Omar, Kei and the bot (default seed: everyone; see beforeAll)

let emu: SlackEmulator;
let bot: WebClient;
let seen = 0;

/** The notifications recorded since the last call of this. */
function fresh(): Notification[] {
  const out = emu.notifications.slice(seen);
  seen = emu.notifications.length;
  return out;
}

const pinged = (ns: Notification[]) =>
  ns.map((n) => ({
    kind: n.kind,
    surface: n.surface,
    users: [...n.users].sort(),
    reason: n.reason,
  }));

beforeAll(async () => {
  ({ emu, bot } = await emulatorWithBot("mentions"));
  emu.workspace.channels.get(EVENTS)!.members.delete(MIA);
});

afterAll(async () => {
  await emu.close();
});

beforeEach(() => {
  fresh();
});

describe("parsing", () => {
  it("finds people, groups and the special mentions, with or without labels", () => {
    expect(
      mentionsInText(
        "<@U0OMAR0ORG> <@U0KEI0ORG|kei> <!subteam^S0ORGANIZERS|@organizers> <!here> <!channel|channel> <!everyone>",
      ),
    ).toEqual([
      { kind: "user", id: OMAR },
      { kind: "user", id: KEI },
      { kind: "usergroup", id: "S0ORGANIZERS" },
      { kind: "here" },
      { kind: "channel" },
      { kind: "everyone" },
    ]);
  });

  it("reads escaped entities, plain @names and links as text: no mention", () => {
    expect(
      mentionsInText("&lt;!channel&gt; &lt;@U0OMAR0ORG&gt; @here <https://x.example/@omar>"),
    ).toEqual([]);
  });
});

describe("who would be pinged", () => {
  it("by the text of a message: the mentioned member; a non-member is not notified", async () => {
    await bot.chat.postMessage({ channel: EVENTS, text: `Hi <@${OMAR}> and <@${MIA}>` });
    expect(pinged(fresh())).toEqual([
      { kind: "user", surface: "text", users: [OMAR], reason: undefined },
      { kind: "user", surface: "text", users: [], reason: "not_in_channel" },
    ]);
  });

  it("by mrkdwn and rich text in blocks, not by plain_text", async () => {
    await bot.chat.postMessage({
      channel: EVENTS,
      text: "card",
      blocks: [
        { type: "section", text: { type: "mrkdwn", text: `Host <@${KEI}>` } },
        { type: "section", text: { type: "plain_text", text: `<@${ADA}>` } },
        { type: "context", elements: [{ type: "mrkdwn", text: "<!here>" }] },
        {
          type: "rich_text",
          elements: [
            {
              type: "rich_text_section",
              elements: [{ type: "usergroup", usergroup_id: "S0ORGANIZERS" }],
            },
          ],
        },
      ],
    });
    expect(pinged(fresh())).toEqual([
      { kind: "user", surface: "blocks", users: [KEI], reason: undefined },
      { kind: "here", surface: "blocks", users: [ADA, KEI, OMAR], reason: undefined },
      { kind: "usergroup", surface: "blocks", users: [KEI, OMAR], reason: undefined },
    ]);
  });

  it("@everyone only in the general channel; @channel reaches every member", async () => {
    await bot.chat.postMessage({ channel: EVENTS, text: "<!everyone> <!channel>" });
    await bot.chat.postMessage({ channel: GENERAL, text: "<!everyone>" });
    expect(pinged(fresh())).toEqual([
      { kind: "everyone", surface: "text", users: [], reason: "outside_general" },
      { kind: "channel", surface: "text", users: [ADA, KEI, OMAR], reason: undefined },
      { kind: "everyone", surface: "text", users: [ADA, KEI, MIA, OMAR], reason: undefined },
    ]);
  });

  it("not by ephemeral messages, edits or attachments (recorded, notified: false)", async () => {
    await bot.chat.postEphemeral({ channel: EVENTS, user: OMAR, text: `<@${OMAR}> only you` });
    const posted = await bot.chat.postMessage({ channel: EVENTS, text: "plain" });
    await bot.chat.update({ channel: EVENTS, ts: posted.ts!, text: `now <@${KEI}>` });
    await bot.chat.postMessage({
      channel: EVENTS,
      text: "see below",
      attachments: [{ text: `<@${ADA}>` }],
    });
    const ns = fresh();
    expect(ns.every((n) => !n.notified)).toBe(true);
    expect(ns.map((n) => [n.via, n.reason])).toEqual([
      ["chat.postEphemeral", "ephemeral"],
      ["chat.update", "edit"],
      ["chat.postMessage", "attachments"],
    ]);
  });

  it("by a message from the app in a DM: the person in it", async () => {
    const dm = emu.workspace.dmWith(MIA).id;
    await bot.chat.postMessage({ channel: dm, text: "Your token is ready" });
    expect(pinged(fresh())).toEqual([
      { kind: "dm", surface: "dm", users: [MIA], reason: undefined },
    ]);
  });

  it("links bare names with link_names", async () => {
    await bot.chat.postMessage({ channel: EVENTS, text: "@omar see #events", link_names: true });
    const ns = fresh();
    expect(pinged(ns)).toEqual([
      { kind: "user", surface: "text", users: [OMAR], reason: undefined },
    ]);
    const stored = emu.workspace.findMessage(emu.workspace.channels.get(EVENTS)!, ns[0]!.ts);
    expect(stored?.text).toBe(`<@${OMAR}|omar> see <#${EVENTS}|events>`);
    await bot.chat.postMessage({ channel: EVENTS, text: "@omar see #events" });
    expect(fresh()).toEqual([]);
  });
});
