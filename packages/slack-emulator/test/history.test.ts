import { type WebAPIPlatformError, WebClient } from "@slack/web-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SlackEmulator, startSlackEmulator } from "../src/index.ts";
import { ALL_TEST_SCOPES, quietLogger } from "./helpers.ts";

// conversations.history and conversations.replies over real HTTP with the real client: time
// ranges, pagination, message metadata only on request, and Slack's refusals.

let clock = Date.UTC(2025, 0, 15, 12, 0, 0);
let emu: SlackEmulator;
let bot: WebClient;

const EVENTS = "C0EVENTS";
const TOWN_HALL = "C0TOWNHALL";

function client(token: string): WebClient {
  return new WebClient(token, {
    slackApiUrl: emu.apiUrl,
    retryConfig: { retries: 0 },
    logger: quietLogger,
  });
}

async function slackError(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    const error = (err as WebAPIPlatformError).data?.error;
    if (typeof error === "string") return error;
    throw err;
  }
  throw new Error("the call succeeded; an error was expected");
}

function meta(seq: number) {
  return { event_type: "onair_digest", event_payload: { eventId: "e1", seq } };
}

let card: string;
const replies: string[] = [];

beforeAll(async () => {
  emu = await startSlackEmulator({
    signingSecret: "emulator-history-secret",
    now: () => clock,
    seed: { botScopes: ALL_TEST_SCOPES },
    rateLimits: false,
  });
  bot = client(emu.botToken);
  await bot.chat.postMessage({ channel: EVENTS, text: "before" });
  clock += 10_000;
  const posted = await bot.chat.postMessage({
    channel: EVENTS,
    text: "card",
    metadata: { event_type: "onair_card", event_payload: { eventId: "e1" } },
  });
  card = posted.ts!;
  for (let seq = 1; seq <= 3; seq++) {
    clock += 1_000;
    const r = await bot.chat.postMessage({
      channel: EVENTS,
      thread_ts: card,
      text: `digest ${seq}`,
      metadata: meta(seq),
    });
    replies.push(r.ts!);
  }
  clock += 1_000;
  await bot.chat.postMessage({ channel: EVENTS, text: "after" });
});

afterAll(async () => {
  await emu.close();
});

describe("conversations.history", () => {
  it("lists top-level messages newest first, metadata only with include_all_metadata", async () => {
    const plain = await bot.conversations.history({ channel: EVENTS });
    expect(plain.messages?.map((m) => m.text)).toEqual(["after", "card", "before"]);
    expect(plain.messages?.every((m) => m.metadata === undefined)).toBe(true);
    const full = await bot.conversations.history({ channel: EVENTS, include_all_metadata: true });
    const listed = full.messages?.find((m) => m.ts === card);
    expect(listed?.metadata).toEqual({
      event_type: "onair_card",
      event_payload: { eventId: "e1" },
    });
    expect(listed).toMatchObject({ reply_count: 3, latest_reply: replies[2], bot_id: "B0ONAIR" });
  });

  it("keeps to oldest and latest, bounds excluded unless inclusive", async () => {
    const after = await bot.conversations.history({ channel: EVENTS, oldest: card });
    expect(after.messages?.map((m) => m.text)).toEqual(["after"]);
    const withBound = await bot.conversations.history({
      channel: EVENTS,
      oldest: card,
      inclusive: true,
    });
    expect(withBound.messages?.map((m) => m.text)).toEqual(["after", "card"]);
    const seconds = String(Math.floor(Number(card)) - 1);
    const before = await bot.conversations.history({ channel: EVENTS, latest: seconds });
    expect(before.messages?.map((m) => m.text)).toEqual(["before"]);
    expect(await slackError(bot.conversations.history({ channel: EVENTS, oldest: "soon" }))).toBe(
      "invalid_ts_oldest",
    );
  });

  it("pages with a cursor", async () => {
    const first = await bot.conversations.history({ channel: EVENTS, limit: 2 });
    expect(first.has_more).toBe(true);
    const cursor = first.response_metadata?.next_cursor;
    expect(cursor).toBeTruthy();
    const second = await bot.conversations.history({
      channel: EVENTS,
      limit: 2,
      cursor: cursor ?? "",
    });
    expect(second.messages?.map((m) => m.text)).toEqual(["before"]);
    expect(second.has_more).toBe(false);
    expect(second.response_metadata?.next_cursor).toBe("");
  });

  it("refuses a channel the bot is not in, and a token without the history scope", async () => {
    expect(await slackError(bot.conversations.history({ channel: TOWN_HALL }))).toBe(
      "not_in_channel",
    );
    const narrow = await startSlackEmulator({
      signingSecret: "s",
      seed: { botScopes: ["chat:write"] },
    });
    try {
      const narrowBot = new WebClient(narrow.botToken, {
        slackApiUrl: narrow.apiUrl,
        retryConfig: { retries: 0 },
        logger: quietLogger,
      });
      expect(await slackError(narrowBot.conversations.history({ channel: EVENTS }))).toBe(
        "missing_scope",
      );
      expect(narrow.calls.at(-1)?.response).toMatchObject({
        needed: expect.stringContaining("channels:history"),
      });
    } finally {
      await narrow.close();
    }
  });

  it("tells another app's bot from the app's own (bot_id, bot_profile)", async () => {
    const other = emu.workspace.addBot("Copycat");
    clock += 1_000;
    const ch = emu.workspace.resolveChannel(EVENTS)!;
    const copy = emu.workspace.postMessage(ch, other.id, {
      text: "copy",
      metadata: meta(99),
    });
    const listed = await bot.conversations.history({
      channel: EVENTS,
      limit: 1,
      include_all_metadata: true,
    });
    const m = listed.messages?.[0];
    expect(m?.ts).toBe(copy.ts);
    expect(m?.bot_id).toBe(other.bot_id);
    expect(m?.bot_id).not.toBe("B0ONAIR");
    expect(m?.bot_profile).toMatchObject({
      id: other.bot_id,
      app_id: other.app_id,
      name: "Copycat",
    });
    const mine = (await bot.conversations.history({ channel: EVENTS, limit: 2 })).messages?.[1];
    expect(mine?.bot_profile).toMatchObject({ id: "B0ONAIR" });
    const info = await bot.users.info({ user: other.id });
    expect(info.user?.profile?.api_app_id).toBe(other.app_id);
  });
});

describe("conversations.replies", () => {
  it("lists the parent then its replies oldest first, with metadata on request", async () => {
    const res = await bot.conversations.replies({
      channel: EVENTS,
      ts: card,
      include_all_metadata: true,
    });
    expect(res.messages?.map((m) => m.text)).toEqual(["card", "digest 1", "digest 2", "digest 3"]);
    expect(res.messages?.slice(1).map((m) => m.metadata)).toEqual([meta(1), meta(2), meta(3)]);
    expect(res.messages?.[1]).toMatchObject({ thread_ts: card, ts: replies[0] });
    const plain = await bot.conversations.replies({ channel: EVENTS, ts: card });
    expect(plain.messages?.every((m) => m.metadata === undefined)).toBe(true);
  });

  it("keeps the parent first and applies the range to the replies; pages them", async () => {
    const res = await bot.conversations.replies({ channel: EVENTS, ts: card, oldest: replies[0]! });
    expect(res.messages?.map((m) => m.text)).toEqual(["card", "digest 2", "digest 3"]);
    const fromReply = await bot.conversations.replies({ channel: EVENTS, ts: replies[1]! });
    expect(fromReply.messages?.[0]?.ts).toBe(card);
    const first = await bot.conversations.replies({ channel: EVENTS, ts: card, limit: 3 });
    expect(first.has_more).toBe(true);
    const rest = await bot.conversations.replies({
      channel: EVENTS,
      ts: card,
      limit: 3,
      cursor: first.response_metadata?.next_cursor ?? "",
    });
    expect(rest.messages?.map((m) => m.text)).toEqual(["digest 3"]);
  });

  it("answers thread_not_found for an unknown ts", async () => {
    expect(await slackError(bot.conversations.replies({ channel: EVENTS, ts: "1.000001" }))).toBe(
      "thread_not_found",
    );
  });
});
