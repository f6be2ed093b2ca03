import { WebClient } from "@slack/web-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SlackEmulator, startSlackEmulator } from "../src/index.ts";
import { ALL_TEST_SCOPES, quietLogger, slackError } from "./helpers.ts";

// Where a bot may post, show ephemeral messages, edit, delete and read, as Slack decides it:
// membership and the kind of conversation, not just the token's scopes.

const ADA = "U0ADA0ADMIN";
const OMAR = "U0OMAR0ORG";
const KEI = "U0KEI0ORG";
const MIA = "U0MIA0MEMBER";
const EVENTS = "C0EVENTS"; // public, bot in
const TOWN_HALL = "C0TOWNHALL"; // public, bot not in
const AUDIT = "C0AUDIT"; // private, bot in (Ada only besides it)
const PLANNING = "C0PLANNING"; // private, bot not in
const OMAR_KEI = "D0OMARKEI"; // a DM between two people
const GROUP = "C0GROUPDM"; // a group DM of three people, bot not in

let emu: SlackEmulator;
let bot: WebClient;
let narrow: SlackEmulator;
let narrowBot: WebClient;

function client(e: SlackEmulator, token: string): WebClient {
  return new WebClient(token, {
    slackApiUrl: e.apiUrl,
    retryConfig: { retries: 0 },
    logger: quietLogger,
  });
}

const seed = {
  channels: [
    {
      id: "C0GENERAL",
      name: "general",
      is_general: true,
      members: [ADA, OMAR, KEI, MIA, "U0ONAIRBOT"],
    },
    { id: EVENTS, name: "events", members: [ADA, OMAR, KEI, "U0ONAIRBOT"] },
    { id: TOWN_HALL, name: "town-hall", members: [ADA, OMAR, KEI, MIA] },
    { id: AUDIT, name: "audit", is_private: true, members: [ADA, "U0ONAIRBOT"] },
    { id: PLANNING, name: "planning", is_private: true, members: [ADA, OMAR, KEI] },
    { id: OMAR_KEI, name: OMAR_KEI, is_im: true, members: [OMAR, KEI] },
    { id: GROUP, name: "mpdm-ada--omar--kei-1", is_mpim: true, members: [ADA, OMAR, KEI] },
  ],
};

beforeAll(async () => {
  emu = await startSlackEmulator({
    signingSecret: "membership",
    seed: { ...seed, botScopes: ALL_TEST_SCOPES },
    rateLimits: false,
  });
  bot = client(emu, emu.botToken);
  narrow = await startSlackEmulator({
    signingSecret: "membership",
    seed: { ...seed, botScopes: ALL_TEST_SCOPES.filter((s) => s !== "chat:write.public") },
    rateLimits: false,
  });
  narrowBot = client(narrow, narrow.botToken);
});

afterAll(async () => {
  await emu.close();
  await narrow.close();
});

describe("chat.postMessage and chat.scheduleMessage", () => {
  it("post to a public channel the bot is not in only with chat:write.public", async () => {
    expect((await bot.chat.postMessage({ channel: TOWN_HALL, text: "hi" })).ok).toBe(true);
    expect(
      (await slackError(narrowBot.chat.postMessage({ channel: TOWN_HALL, text: "hi" }))).error,
    ).toBe("not_in_channel");
    const later = Math.floor(Date.now() / 1000) + 3600;
    expect(
      (
        await slackError(
          narrowBot.chat.scheduleMessage({ channel: TOWN_HALL, text: "hi", post_at: later }),
        )
      ).error,
    ).toBe("not_in_channel");
    expect(
      (await bot.chat.scheduleMessage({ channel: TOWN_HALL, text: "hi", post_at: later })).ok,
    ).toBe(true);
  });

  it("see no private channel, DM or group DM the bot is not in: channel_not_found", async () => {
    for (const channel of [PLANNING, OMAR_KEI, GROUP]) {
      expect((await slackError(bot.chat.postMessage({ channel, text: "hi" }))).error, channel).toBe(
        "channel_not_found",
      );
    }
    expect((await bot.chat.postMessage({ channel: AUDIT, text: "hi" })).ok).toBe(true);
  });
});

describe("chat.postEphemeral", () => {
  it("needs the bot in the conversation, whatever chat:write.public says", async () => {
    expect(
      (await slackError(bot.chat.postEphemeral({ channel: TOWN_HALL, user: OMAR, text: "t" })))
        .error,
    ).toBe("not_in_channel");
    for (const channel of [PLANNING, OMAR_KEI, GROUP]) {
      expect(
        (await slackError(bot.chat.postEphemeral({ channel, user: OMAR, text: "t" }))).error,
        channel,
      ).toBe("channel_not_found");
    }
    expect((await bot.chat.postEphemeral({ channel: EVENTS, user: OMAR, text: "t" })).ok).toBe(
      true,
    );
  });

  it("needs the person in it too: user_not_in_channel", async () => {
    expect(
      (await slackError(bot.chat.postEphemeral({ channel: EVENTS, user: MIA, text: "t" }))).error,
    ).toBe("user_not_in_channel");
    expect(
      (await slackError(bot.chat.postEphemeral({ channel: EVENTS, user: "U0NOBODY", text: "t" })))
        .error,
    ).toBe("user_not_in_channel");
  });

  it("reaches a person in the app's DM with them", async () => {
    const dm = emu.workspace.dmWith(MIA).id;
    expect((await bot.chat.postEphemeral({ channel: dm, user: MIA, text: "t" })).ok).toBe(true);
  });
});

describe("chat.update and chat.delete", () => {
  it("edit and delete only the bot's own messages, only where it can see", async () => {
    const own = await bot.chat.postMessage({ channel: EVENTS, text: "mine" });
    const theirs = emu.workspace.postMessage(emu.workspace.channels.get(EVENTS)!, OMAR, {
      text: "Omar's",
    });
    expect((await bot.chat.update({ channel: EVENTS, ts: own.ts!, text: "edited" })).ok).toBe(true);
    expect(
      (await slackError(bot.chat.update({ channel: EVENTS, ts: theirs.ts, text: "x" }))).error,
    ).toBe("cant_update_message");
    expect((await slackError(bot.chat.delete({ channel: EVENTS, ts: theirs.ts }))).error).toBe(
      "cant_delete_message",
    );
    const hidden = emu.workspace.postMessage(emu.workspace.channels.get(PLANNING)!, ADA, {
      text: "plan",
    });
    expect(
      (await slackError(bot.chat.update({ channel: PLANNING, ts: hidden.ts, text: "x" }))).error,
    ).toBe("channel_not_found");
    expect((await bot.chat.delete({ channel: EVENTS, ts: own.ts! })).ok).toBe(true);
  });
});

describe("conversations.*", () => {
  it("reads history only as a member: not_in_channel in public, channel_not_found in private", async () => {
    expect((await slackError(bot.conversations.history({ channel: TOWN_HALL }))).error).toBe(
      "not_in_channel",
    );
    expect((await slackError(bot.conversations.history({ channel: PLANNING }))).error).toBe(
      "channel_not_found",
    );
    expect((await bot.conversations.history({ channel: EVENTS })).ok).toBe(true);
  });

  it("reads replies only as a member (channel_not_found, the reference's only refusal)", async () => {
    const parent = emu.workspace.postMessage(emu.workspace.channels.get(TOWN_HALL)!, OMAR, {
      text: "p",
    });
    expect(
      (await slackError(bot.conversations.replies({ channel: TOWN_HALL, ts: parent.ts }))).error,
    ).toBe("channel_not_found");
  });

  it("joins public channels only", async () => {
    expect((await slackError(bot.conversations.join({ channel: AUDIT }))).error).toBe(
      "method_not_supported_for_channel_type",
    );
    expect((await slackError(bot.conversations.join({ channel: PLANNING }))).error).toBe(
      "channel_not_found",
    );
    expect((await bot.conversations.join({ channel: TOWN_HALL })).ok).toBe(true);
    expect((await bot.conversations.history({ channel: TOWN_HALL })).ok).toBe(true);
  });

  it("lists private channels and group DMs only where the bot is", async () => {
    const r = await bot.conversations.list({ types: "public_channel,private_channel,mpim,im" });
    const ids = (r.channels ?? []).map((c) => c.id);
    expect(ids).toContain(AUDIT);
    expect(ids).not.toContain(PLANNING);
    expect(ids).not.toContain(GROUP);
    expect(ids).not.toContain(OMAR_KEI);
  });

  it("opens a group DM with several people, and the bot can post there", async () => {
    const open = await bot.conversations.open({ users: `${OMAR},${KEI}` });
    const id = open.channel?.id as string;
    expect(id).not.toBe(GROUP);
    expect(emu.workspace.channels.get(id)?.is_mpim).toBe(true);
    expect((await bot.chat.postMessage({ channel: id, text: "hi both" })).ok).toBe(true);
  });
});
