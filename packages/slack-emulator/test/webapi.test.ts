// Why this file is long: every Web API family's tests share one emulator, one real WebClient and
// one clock that the tests move together (scheduled messages, throttles, token expiry), set up
// once below; split, each part would need its own copy of that set-up.
import {
  type WebAPIPlatformError,
  WebAPIRateLimitedError,
  WebClient,
  type WebClientOptions,
} from "@slack/web-api";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type SlackEmulator, startSlackEmulator } from "../src/index.ts";
import { authorize } from "../src/oauth.ts";
import { ALL_TEST_SCOPES, quietLogger } from "./helpers.ts";

// The emulator over real HTTP, driven by the real @slack/web-api client the app uses.

let clock = Date.UTC(2025, 0, 15, 12, 0, 0);
let emu: SlackEmulator;
let bot: WebClient;

const GENERAL = "C0GENERAL";
const EVENTS = "C0EVENTS";
const TOWN_HALL = "C0TOWNHALL";
const AUDIT = "C0AUDIT";
const ADA = "U0ADA0ADMIN";
const OMAR = "U0OMAR0ORG";
const MIA = "U0MIA0MEMBER";

const quiet: WebClientOptions = { retryConfig: { retries: 0 }, logger: quietLogger };

function client(token?: string, extra: WebClientOptions = {}): WebClient {
  return new WebClient(token, { slackApiUrl: emu.apiUrl, ...quiet, ...extra });
}

/** The Slack error name a call failed with (WebClient throws WebAPIPlatformError). */
async function slackError(
  p: Promise<unknown>,
): Promise<{ error: string; data: Record<string, unknown> }> {
  try {
    await p;
  } catch (err) {
    const data = (err as WebAPIPlatformError).data as unknown as Record<string, unknown>;
    if (data && typeof data.error === "string") return { error: data.error, data };
    throw err;
  }
  throw new Error("the call succeeded; an error was expected");
}

function modal(title = "Schedule", extra: Record<string, unknown> = {}) {
  return {
    type: "modal" as const,
    title: { type: "plain_text" as const, text: title },
    submit: { type: "plain_text" as const, text: "Save" },
    blocks: [
      {
        type: "input",
        block_id: "title",
        label: { type: "plain_text", text: "Title" },
        element: { type: "plain_text_input", action_id: "value" },
      },
    ],
    ...extra,
  };
}

beforeAll(async () => {
  // Rate limits are tested in ratelimit.test.ts; here the clock stands still, so they are off.
  emu = await startSlackEmulator({
    signingSecret: "emulator-test-secret",
    now: () => clock,
    seed: { botScopes: ALL_TEST_SCOPES },
    rateLimits: false,
  });
  bot = client(emu.botToken);
});

afterAll(async () => {
  await emu.close();
});

beforeEach(() => {
  emu.clearThrottles();
});

describe("authentication", () => {
  it("accepts the seeded bot token and names the bot", async () => {
    const r = await bot.auth.test();
    expect(r.ok).toBe(true);
    expect(r.team_id).toBe("T0ONAIR");
    expect(r.user_id).toBe(emu.workspace.app.botUserId);
    expect(r.bot_id).toBe(emu.workspace.app.botId);
    expect(emu.botToken).toMatch(/^xoxb-/);
  });

  it("answers not_authed without a token and invalid_auth for an unknown one", async () => {
    expect((await slackError(client().auth.test())).error).toBe("not_authed");
    expect((await slackError(client("xoxb-1-2-nope").auth.test())).error).toBe("invalid_auth");
  });

  it("answers unknown_method for a method Slack does not have", async () => {
    expect((await slackError(bot.apiCall("chat.shout", { channel: GENERAL }))).error).toBe(
      "unknown_method",
    );
  });

  it("takes JSON bodies with the token in the Authorization header, never in the body", async () => {
    const post = (headers: Record<string, string>, body: unknown) =>
      fetch(`${emu.apiUrl}chat.postMessage`, {
        method: "POST",
        headers: { "content-type": "application/json; charset=utf-8", ...headers },
        body: JSON.stringify(body),
      }).then(async (r) => ({
        status: r.status,
        body: (await r.json()) as Record<string, unknown>,
      }));
    const ok = await post(
      { authorization: `Bearer ${emu.botToken}` },
      { channel: GENERAL, text: "json", blocks: [{ type: "divider" }] },
    );
    expect(ok).toMatchObject({ status: 200, body: { ok: true, channel: GENERAL } });
    const noAuth = await post({}, { channel: GENERAL, text: "json", token: emu.botToken });
    expect(noAuth.body).toEqual({ ok: false, error: "not_authed" });
  });

  it("revokes a token with auth.revoke", async () => {
    emu.workspace.tokens.set("xoxb-9-9-revokeme", {
      token: "xoxb-9-9-revokeme",
      kind: "bot",
      userId: emu.workspace.app.botUserId,
      scopes: ["chat:write"],
      expiresAt: undefined,
      refreshToken: undefined,
      revoked: false,
    });
    const c = client("xoxb-9-9-revokeme");
    expect(await c.auth.revoke()).toMatchObject({ ok: true, revoked: true });
    expect((await slackError(c.auth.test())).error).toBe("token_revoked");
  });
});

describe("messages", () => {
  it("refuses message metadata that is not Slack's format, and an edit in an archived channel", async () => {
    const post = (metadata: unknown) =>
      slackError(bot.chat.postMessage({ channel: EVENTS, text: "m", metadata } as never));
    // Not JSON; JSON without a string event_type and an object event_payload.
    expect((await post("{not json")).error).toBe("invalid_metadata_format");
    for (const bad of [
      { event_type: 5, event_payload: {} },
      { event_type: "", event_payload: {} },
      { event_type: "onair_card" },
      { event_type: "onair_card", event_payload: [1] },
      ["onair_card"],
    ]) {
      expect((await post(JSON.stringify(bad))).error, JSON.stringify(bad)).toBe(
        "invalid_metadata_schema",
      );
    }
    const good = { event_type: "onair_card", event_payload: { eventId: "e1" } };
    const ok = await bot.chat.postMessage({ channel: EVENTS, text: "m", metadata: good });
    expect(
      (
        await slackError(
          bot.chat.update({
            channel: EVENTS,
            ts: ok.ts!,
            text: "m2",
            metadata: JSON.stringify({ event_type: "x" }),
          } as never),
        )
      ).error,
    ).toBe("invalid_metadata_schema");
    expect(
      (
        await slackError(
          bot.chat.scheduleMessage({
            channel: EVENTS,
            text: "later",
            post_at: Math.floor(clock / 1000) + 3600,
            metadata: JSON.stringify({ event_payload: {} }),
          } as never),
        )
      ).error,
    ).toBe("invalid_metadata_schema");
    // Slack: "The message cannot be edited within a frozen, archived or deleted channel."
    const ch = emu.workspace.channels.get(EVENTS)!;
    ch.is_archived = true;
    try {
      expect(
        (await slackError(bot.chat.update({ channel: EVENTS, ts: ok.ts!, text: "late" }))).error,
      ).toBe("is_inactive");
    } finally {
      ch.is_archived = false;
    }
  });

  it("honours a channel's posting limits and a locked thread", async () => {
    const ch = emu.workspace.channels.get(EVENTS)!;
    const parent = await bot.chat.postMessage({ channel: EVENTS, text: "Town hall" });
    const later = Math.floor(clock / 1000) + 3600;
    try {
      ch.posting = "thread_only";
      expect((await slackError(bot.chat.postMessage({ channel: EVENTS, text: "top" }))).error).toBe(
        "restricted_action_thread_only_channel",
      );
      expect(
        (
          await slackError(
            bot.chat.scheduleMessage({ channel: EVENTS, text: "top", post_at: later }),
          )
        ).error,
      ).toBe("restricted_action_thread_only_channel");
      const reply = await bot.chat.postMessage({
        channel: EVENTS,
        thread_ts: parent.ts!,
        text: "in the thread",
      });
      expect(reply.ok).toBe(true);
      ch.posting = "read_only";
      expect(
        (
          await slackError(
            bot.chat.postMessage({ channel: EVENTS, thread_ts: parent.ts!, text: "reply" }),
          )
        ).error,
      ).toBe("restricted_action_read_only_channel");
      ch.posting = undefined;
      // A locked thread takes no reply, also when the reply names a reply in it.
      emu.workspace.findMessage(ch, parent.ts!)!.thread_locked = true;
      for (const ts of [parent.ts!, reply.ts!]) {
        expect(
          (await slackError(bot.chat.postMessage({ channel: EVENTS, thread_ts: ts, text: "r" })))
            .error,
        ).toBe("restricted_action_thread_locked");
      }
      expect((await bot.chat.postMessage({ channel: EVENTS, text: "top again" })).ok).toBe(true);
      // The mark is the emulator's own: no such field in Slack's message object.
      const listed = await bot.conversations.history({ channel: EVENTS, limit: 5 });
      expect(JSON.stringify(listed.messages)).not.toContain("thread_locked");
    } finally {
      ch.posting = undefined;
      const p = emu.workspace.findMessage(ch, parent.ts!);
      if (p) p.thread_locked = false;
    }
  });

  it("posts, threads, updates and deletes like Slack", async () => {
    const parent = await bot.chat.postMessage({ channel: EVENTS, text: "Town hall at 5" });
    expect(parent.ts).toMatch(/^\d{10}\.\d{6}$/);
    const reply = await bot.chat.postMessage({
      channel: EVENTS,
      thread_ts: parent.ts!,
      text: "Ada joined",
    });
    // A reply to a reply lands under the parent, as in Slack.
    const reply2 = await bot.chat.postMessage({ channel: EVENTS, thread_ts: reply.ts!, text: "x" });
    const stored = emu.workspace.findMessage(emu.workspace.channels.get(EVENTS)!, parent.ts!)!;
    expect(stored.reply_count).toBe(2);
    expect(stored.latest_reply).toBe(reply2.ts);
    expect(emu.workspace.replies(EVENTS, parent.ts!).map((m) => m.ts)).toEqual([
      reply.ts,
      reply2.ts,
    ]);

    const updated = await bot.chat.update({
      channel: EVENTS,
      ts: parent.ts!,
      text: "Town hall at 6",
    });
    expect(updated.ts).toBe(parent.ts);
    expect(stored.text).toBe("Town hall at 6");
    expect(stored.edited?.user).toBe(emu.workspace.app.botUserId);

    await bot.chat.delete({ channel: EVENTS, ts: reply2.ts! });
    expect(stored.reply_count).toBe(1);
    expect((await slackError(bot.chat.delete({ channel: EVENTS, ts: reply2.ts! }))).error).toBe(
      "message_not_found",
    );
    expect(
      (await slackError(bot.chat.update({ channel: EVENTS, ts: "1111111111.000001", text: "x" })))
        .error,
    ).toBe("message_not_found");
  });

  it("keeps ts strictly increasing even when the clock stands still", async () => {
    const seen: string[] = [];
    for (let i = 0; i < 5; i++) {
      seen.push((await bot.chat.postMessage({ channel: GENERAL, text: `n${i}` })).ts!);
    }
    const asMicros = seen.map((t) => Number(t.replace(".", "")));
    for (let i = 1; i < asMicros.length; i++)
      expect(asMicros[i]!).toBeGreaterThan(asMicros[i - 1]!);
  });

  it("refuses what Slack refuses: no text, unknown channel; warns where Slack lets it pass", async () => {
    expect((await slackError(bot.chat.postMessage({ channel: GENERAL, text: "" }))).error).toBe(
      "no_text",
    );
    expect((await slackError(bot.chat.postMessage({ channel: "C0NOPE", text: "x" }))).error).toBe(
      "channel_not_found",
    );
    expect(
      (
        await slackError(
          bot.chat.postEphemeral({ channel: GENERAL, user: MIA, text: "x".repeat(40_001) }),
        )
      ).error,
    ).toBe("msg_too_long");
    // No documented error for these two: Slack posts them. The call record says what was odd.
    const orphan = await bot.chat.postMessage({
      channel: GENERAL,
      text: "x",
      thread_ts: "1.000001",
    });
    expect(orphan.ok).toBe(true);
    const long = await bot.chat.postMessage({ channel: GENERAL, text: "x".repeat(40_001) });
    expect(long.ok).toBe(true);
    const recorded = emu.calls.filter((c) => c.method === "chat.postMessage").slice(-2);
    expect(recorded.map((c) => c.warnings)).toEqual([
      ["thread_ts_not_found"],
      ["text_over_40000_characters"],
    ]);
    // The orphan reply stays out of the channel's top level.
    expect(emu.workspace.topLevel(GENERAL).some((m) => m.ts === orphan.ts)).toBe(false);
  });

  it("lets a user's message stand: the bot cannot edit it", async () => {
    const ch = emu.workspace.channels.get(GENERAL)!;
    const human = emu.workspace.postMessage(ch, OMAR, { text: "hello" });
    expect(
      (await slackError(bot.chat.update({ channel: GENERAL, ts: human.ts, text: "x" }))).error,
    ).toBe("cant_update_message");
  });

  it("posts ephemeral messages per channel and user", async () => {
    const r = await bot.chat.postEphemeral({ channel: AUDIT, user: ADA, text: "only you" });
    expect(r.message_ts).toMatch(/^\d{10}\.\d{6}$/);
    expect(emu.workspace.ephemeralsFor({ channel: AUDIT, user: ADA }).map((e) => e.text)).toContain(
      "only you",
    );
    expect(emu.workspace.ephemeralsFor({ channel: AUDIT, user: MIA })).toHaveLength(0);
    expect(
      (await slackError(bot.chat.postEphemeral({ channel: AUDIT, user: MIA, text: "x" }))).error,
    ).toBe("user_not_in_channel");
  });

  it("posts to a public channel the bot is not in only with chat:write.public; joins", async () => {
    await bot.chat.postMessage({ channel: "#town-hall", text: "public" });
    expect(emu.workspace.topLevel(TOWN_HALL).map((m) => m.text)).toContain("public");
    const joined = await bot.conversations.join({ channel: TOWN_HALL });
    expect((joined.channel as { is_member: boolean }).is_member).toBe(true);
    const again = await bot.conversations.join({ channel: TOWN_HALL });
    expect(again.warning).toBe("already_in_channel");
    expect((await slackError(bot.conversations.join({ channel: AUDIT }))).error).toBe(
      "method_not_supported_for_channel_type",
    );
    // Leave again, so later tests find the bot outside #town-hall as seeded.
    emu.workspace.channels.get(TOWN_HALL)!.members.delete(emu.workspace.app.botUserId);
  });

  it("gives permalinks and DMs", async () => {
    const m = await bot.chat.postMessage({ channel: OMAR, text: "a DM" });
    expect(m.channel).toMatch(/^D/);
    const link = await bot.chat.getPermalink({ channel: m.channel!, message_ts: m.ts! });
    expect(link.permalink).toBe(
      `https://onair-playground.slack.com/archives/${m.channel}/p${m.ts!.replace(".", "")}`,
    );
    const opened = await bot.conversations.open({ users: OMAR });
    expect((opened.channel as { id: string }).id).toBe(m.channel);
  });
});

describe("scheduled messages", () => {
  it("schedules, lists, deletes and releases on the emulator clock", async () => {
    const nowSec = Math.floor(clock / 1000);
    const a = await bot.chat.scheduleMessage({
      channel: EVENTS,
      post_at: nowSec + 3600,
      text: "in 1 h",
    });
    const b = await bot.chat.scheduleMessage({
      channel: EVENTS,
      post_at: nowSec + 600,
      text: "10 min",
    });
    expect(a.scheduled_message_id).toMatch(/^Q/);
    const list = await bot.chat.scheduledMessages.list({ channel: EVENTS });
    expect(list.scheduled_messages?.map((s) => s.text)).toEqual(["10 min", "in 1 h"]);

    await bot.chat.deleteScheduledMessage({
      channel: EVENTS,
      scheduled_message_id: a.scheduled_message_id!,
    });
    expect(
      (
        await slackError(
          bot.chat.deleteScheduledMessage({
            channel: EVENTS,
            scheduled_message_id: a.scheduled_message_id!,
          }),
        )
      ).error,
    ).toBe("invalid_scheduled_message_id");

    expect(emu.releaseDue()).toHaveLength(0);
    clock += 601_000;
    const posted = emu.releaseDue();
    expect(posted.map((m) => m.text)).toEqual(["10 min"]);
    expect(emu.workspace.scheduled.has(b.scheduled_message_id!)).toBe(false);
    expect(emu.workspace.topLevel(EVENTS).at(-1)?.text).toBe("10 min");
  });

  it("lists one scheduled with metadata but never posts it, as Slack's bug alert says", async () => {
    const nowSec = Math.floor(clock / 1000);
    const withMeta = await bot.chat.scheduleMessage({
      channel: EVENTS,
      post_at: nowSec + 60,
      text: "carries metadata",
      metadata: { event_type: "onair_reminder", event_payload: { eventId: "e1" } },
    });
    const plain = await bot.chat.scheduleMessage({
      channel: EVENTS,
      post_at: nowSec + 61,
      text: "plain",
    });
    const listed = await bot.chat.scheduledMessages.list({ channel: EVENTS });
    expect(listed.scheduled_messages?.map((s) => s.id)).toEqual(
      expect.arrayContaining([withMeta.scheduled_message_id, plain.scheduled_message_id]),
    );
    clock += 62_000;
    expect(emu.releaseDue().map((m) => m.text)).toEqual(["plain"]);
    expect(emu.workspace.scheduled.has(withMeta.scheduled_message_id!)).toBe(false);
  });

  it("refuses the past and more than 120 days ahead", async () => {
    const nowSec = Math.floor(clock / 1000);
    expect(
      (
        await slackError(
          bot.chat.scheduleMessage({ channel: EVENTS, post_at: nowSec - 1, text: "x" }),
        )
      ).error,
    ).toBe("time_in_past");
    expect(
      (
        await slackError(
          bot.chat.scheduleMessage({ channel: EVENTS, post_at: nowSec + 121 * 86_400, text: "x" }),
        )
      ).error,
    ).toBe("time_too_far");
  });
});

describe("views", () => {
  it("opens, pushes up to three, updates by id and external_id with the hash checked", async () => {
    const t1 = emu.workspace.issueTriggerId(OMAR);
    const opened = await bot.views.open({ trigger_id: t1, view: modal("One") });
    const root = opened.view!;
    expect(root.id).toMatch(/^V/);
    expect(emu.workspace.topView(OMAR)?.view.id).toBe(root.id);

    await bot.views.push({ trigger_id: emu.workspace.issueTriggerId(OMAR), view: modal("Two") });
    const third = await bot.views.push({
      trigger_id: emu.workspace.issueTriggerId(OMAR),
      view: modal("Three", { external_id: "onair-third" }),
    });
    expect(third.view?.root_view_id).toBe(root.id);
    expect(emu.workspace.stack(OMAR)).toHaveLength(3);
    expect(
      (
        await slackError(
          bot.views.push({ trigger_id: emu.workspace.issueTriggerId(OMAR), view: modal("Four") }),
        )
      ).error,
    ).toBe("push_limit_reached");

    const upd = await bot.views.update({
      view_id: root.id!,
      hash: root.hash!,
      view: modal("One again"),
    });
    expect(upd.view?.id).toBe(root.id);
    expect(upd.view?.hash).not.toBe(root.hash);
    expect(
      (
        await slackError(
          bot.views.update({ view_id: root.id!, hash: root.hash!, view: modal("Stale") }),
        )
      ).error,
    ).toBe("hash_conflict");
    const byExt = await bot.views.update({ external_id: "onair-third", view: modal("Three bis") });
    expect(byExt.view?.id).toBe(third.view?.id);
    expect((await slackError(bot.views.update({ view_id: "V0NOPE", view: modal() }))).error).toBe(
      "not_found",
    );
  });

  it("takes a trigger once, and only within 3 seconds", async () => {
    const t = emu.workspace.issueTriggerId(MIA);
    await bot.views.open({ trigger_id: t, view: modal() });
    expect((await slackError(bot.views.open({ trigger_id: t, view: modal() }))).error).toBe(
      "exchanged_trigger_id",
    );
    const late = emu.workspace.issueTriggerId(MIA);
    clock += 3_001;
    expect((await slackError(bot.views.open({ trigger_id: late, view: modal() }))).error).toBe(
      "expired_trigger_id",
    );
    expect(
      (await slackError(bot.views.open({ trigger_id: "12.34.ab", view: modal() }))).error,
    ).toBe("invalid_trigger_id");
  });

  it("publishes App Home per user and keeps its id", async () => {
    const home = {
      type: "home" as const,
      blocks: [{ type: "section", text: { type: "mrkdwn", text: "Hi" } }],
    };
    const first = await bot.views.publish({ user_id: ADA, view: home });
    const second = await bot.views.publish({ user_id: ADA, view: home, hash: first.view!.hash! });
    expect(second.view?.id).toBe(first.view?.id);
    expect(emu.workspace.homeView(ADA)?.view.hash).toBe(second.view?.hash);
    expect(
      (await slackError(bot.views.publish({ user_id: ADA, view: home, hash: first.view!.hash! })))
        .error,
    ).toBe("hash_conflict");
    expect(
      (await slackError(bot.views.publish({ user_id: ADA, view: modal() as never }))).error,
    ).toBe("invalid_arguments");
  });
});

describe("Block Kit limits", () => {
  const section = (text: string, extra: Record<string, unknown> = {}) => ({
    type: "section",
    text: { type: "mrkdwn", text },
    ...extra,
  });

  it("rejects message blocks with invalid_blocks and Slack's pointers", async () => {
    const tooMany = Array.from({ length: 51 }, (_, i) => section(`b${i}`));
    const e1 = await slackError(
      bot.chat.postMessage({ channel: GENERAL, text: "x", blocks: tooMany }),
    );
    expect(e1.error).toBe("invalid_blocks");
    expect(e1.data.response_metadata).toMatchObject({
      messages: ["[ERROR] no more than 50 items allowed [json-pointer:/blocks]"],
    });

    const cases: [string, unknown[]][] = [
      ["/blocks/0/text/text", [section("x".repeat(3001))]],
      [
        "/blocks/0/text/text",
        [{ type: "header", text: { type: "plain_text", text: "h".repeat(151) } }],
      ],
      [
        "/blocks/0/elements/0/text/text",
        [
          {
            type: "actions",
            elements: [
              {
                type: "button",
                action_id: "a",
                text: { type: "plain_text", text: "b".repeat(76) },
              },
            ],
          },
        ],
      ],
      [
        "/blocks/1/block_id",
        [section("a", { block_id: "same" }), section("b", { block_id: "same" })],
      ],
      ["/blocks/0/block_id", [section("a", { block_id: "i".repeat(256) })]],
      [
        "/blocks/0/elements/1/action_id",
        [
          {
            type: "actions",
            elements: [
              { type: "button", action_id: "dup", text: { type: "plain_text", text: "1" } },
              { type: "button", action_id: "dup", text: { type: "plain_text", text: "2" } },
            ],
          },
        ],
      ],
      [
        "/blocks/0/fields",
        [
          {
            type: "section",
            fields: Array.from({ length: 11 }, () => ({ type: "mrkdwn", text: "f" })),
          },
        ],
      ],
      [
        "/blocks/0/elements",
        [
          {
            type: "actions",
            elements: Array.from({ length: 26 }, (_, i) => ({
              type: "button",
              action_id: `b${i}`,
              text: { type: "plain_text", text: "b" },
            })),
          },
        ],
      ],
      [
        "/blocks/0/accessory/options",
        [
          section("pick", {
            accessory: {
              type: "static_select",
              action_id: "s",
              options: Array.from({ length: 101 }, (_, i) => ({
                text: { type: "plain_text", text: `o${i}` },
                value: `v${i}`,
              })),
            },
          }),
        ],
      ],
    ];
    for (const [pointer, blocks] of cases) {
      const e = await slackError(
        bot.chat.postMessage({ channel: GENERAL, text: "x", blocks: blocks as never }),
      );
      expect(e.error).toBe("invalid_blocks");
      const messages = (e.data.response_metadata as { messages: string[] }).messages;
      expect(messages.some((m) => m.endsWith(`[json-pointer:${pointer}]`))).toBe(true);
    }
  });

  it("rejects views over their limits with invalid_arguments", async () => {
    const bad: [string, unknown][] = [
      ["/view/title/text", modal("t".repeat(25))],
      ["/view/submit/text", modal("ok", { submit: { type: "plain_text", text: "s".repeat(25) } })],
      ["/view/private_metadata", modal("ok", { private_metadata: "m".repeat(3001) })],
      ["/view/callback_id", modal("ok", { callback_id: "c".repeat(256) })],
      [
        "/view/blocks",
        modal("ok", { blocks: Array.from({ length: 101 }, () => ({ type: "divider" })) }),
      ],
    ];
    for (const [pointer, view] of bad) {
      const e = await slackError(
        bot.views.open({ trigger_id: emu.workspace.issueTriggerId(ADA), view: view as never }),
      );
      expect(e.error).toBe("invalid_arguments");
      const messages = (e.data.response_metadata as { messages: string[] }).messages;
      expect(messages.some((m) => m.endsWith(`[json-pointer:${pointer}]`))).toBe(true);
    }
    // 100 blocks are fine in a view, where a message stops at 50.
    const hundred = modal("ok", {
      blocks: Array.from({ length: 100 }, () => ({ type: "divider" })),
    });
    const r = await bot.views.open({
      trigger_id: emu.workspace.issueTriggerId(ADA),
      view: hundred as never,
    });
    expect(r.ok).toBe(true);
  });
});

describe("people, channels, groups, team", () => {
  it("looks users up by e-mail, with zones and offsets", async () => {
    const r = await bot.users.lookupByEmail({ email: "kei@example.com" });
    expect(r.user?.tz).toBe("Asia/Tokyo");
    expect(r.user?.tz_offset).toBe(9 * 3600);
    expect(r.user?.profile?.email).toBe("kei@example.com");
    expect((await slackError(bot.users.lookupByEmail({ email: "nobody@example.com" }))).error).toBe(
      "users_not_found",
    );
    const ada = await bot.users.info({ user: ADA });
    expect(ada.user).toMatchObject({
      is_admin: true,
      is_owner: true,
      tz: "America/New_York",
      tz_offset: -5 * 3600,
    });
    expect((await slackError(bot.users.info({ user: "U0NOPE" }))).error).toBe("user_not_found");
  });

  it("refuses a conversations.members limit outside 1–1000", async () => {
    for (const limit of [0, -1, 1001]) {
      expect(
        (await slackError(bot.conversations.members({ channel: EVENTS, limit }))).error,
        String(limit),
      ).toBe("invalid_limit");
    }
    expect((await bot.conversations.members({ channel: EVENTS, limit: 1000 })).ok).toBe(true);
  });

  it("pages through users and channels with cursors", async () => {
    const names: string[] = [];
    for await (const page of bot.paginate("users.list", { limit: 2 })) {
      for (const m of (page as unknown as { members: { name: string }[] }).members)
        names.push(m.name);
    }
    expect(names).toEqual(["ada", "omar", "kei", "mia", "onair"]);
    const chans = await bot.conversations.list({ types: "public_channel,private_channel" });
    expect(chans.channels?.map((c) => c.name)).toEqual(["general", "events", "town-hall", "audit"]);
    const members = await bot.conversations.members({ channel: AUDIT });
    expect(members.members).toEqual([ADA, emu.workspace.app.botUserId]);
    const info = await bot.conversations.info({ channel: EVENTS });
    expect(info.channel).toMatchObject({
      id: EVENTS,
      name: "events",
      is_member: true,
      is_private: false,
    });
  });

  it("lists user groups and their members, and the team", async () => {
    const groups = await bot.usergroups.list({ include_users: true });
    expect(groups.usergroups?.[0]).toMatchObject({
      id: "S0ORGANIZERS",
      handle: "organizers",
      users: [OMAR, "U0KEI0ORG"],
    });
    expect((await bot.usergroups.users.list({ usergroup: "S0ORGANIZERS" })).users).toEqual([
      OMAR,
      "U0KEI0ORG",
    ]);
    expect((await slackError(bot.usergroups.users.list({ usergroup: "S0NOPE" }))).error).toBe(
      "no_such_subteam",
    );
    expect((await bot.team.info()).team).toMatchObject({
      id: "T0ONAIR",
      name: "On Air Playground",
    });
  });
});

describe("throttling", () => {
  it("answers 429 with Retry-After, for one method and one channel only", async () => {
    emu.throttle({ method: "chat.postMessage", channel: EVENTS, times: 1, retryAfterSec: 7 });
    const raw = await fetch(`${emu.apiUrl}chat.postMessage`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${emu.botToken}`,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({ channel: GENERAL, text: "other channel" }),
    });
    expect(raw.status).toBe(200);
    const hit = await fetch(`${emu.apiUrl}chat.postMessage`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${emu.botToken}`,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({ channel: EVENTS, text: "throttled" }),
    });
    expect(hit.status).toBe(429);
    expect(hit.headers.get("retry-after")).toBe("7");
    expect(await hit.json()).toEqual({ ok: false, error: "ratelimited" });
  });

  it("answers a refusal instead when the rule names a Slack error, then goes back to normal", async () => {
    emu.throttle({
      method: "conversations.join",
      channel: EVENTS,
      times: 1,
      retryAfterSec: 0,
      error: "channel_is_limited_access",
    });
    const err = await bot.conversations.join({ channel: EVENTS }).catch((e: unknown) => e);
    expect((err as { data?: { error?: string } }).data?.error).toBe("channel_is_limited_access");
    expect(emu.calls.at(-1)).toMatchObject({
      method: "conversations.join",
      ok: false,
      error: "channel_is_limited_access",
      status: 200,
    });
    expect((await bot.conversations.join({ channel: EVENTS })).ok).toBe(true);
  });

  it("is retried by WebClient after Retry-After, or surfaced when it rejects rate-limited calls", async () => {
    emu.throttle({ method: "chat.postMessage", times: 1, retryAfterSec: 1 });
    const since = emu.calls.at(-1)?.seq ?? 0;
    const retrying = client(emu.botToken, {
      retryConfig: { retries: 2, factor: 1, minTimeout: 10, maxTimeout: 10 },
    });
    const r = await retrying.chat.postMessage({ channel: GENERAL, text: "after retry" });
    expect(r.ok).toBe(true);
    const mine = emu.calls.filter((c) => c.seq > since && c.method === "chat.postMessage");
    expect(mine.map((c) => c.status)).toEqual([429, 200]);

    emu.throttle({ method: "chat.update", times: 1, retryAfterSec: 30 });
    const rejecting = client(emu.botToken, { rejectRateLimitedCalls: true });
    const err = await rejecting.chat
      .update({ channel: GENERAL, ts: r.ts!, text: "x" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WebAPIRateLimitedError);
    expect((err as WebAPIRateLimitedError).retryAfter).toBe(30);
  });

  it("paces a channel at the configured rate when a rate limit is set", async () => {
    emu.setRateLimit({ perChannelPerSec: 1, burst: 2 });
    try {
      const paced = client(emu.botToken, { rejectRateLimitedCalls: true });
      const send = () => paced.chat.postMessage({ channel: EVENTS, text: "burst" });
      await send();
      await send();
      const err = await send().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WebAPIRateLimitedError);
      clock += 1_000;
      expect((await send()).ok).toBe(true);
    } finally {
      emu.setRateLimit(undefined);
    }
  });
});

describe("OAuth", () => {
  it("authorize → redirect with code and state → oauth.v2.access install response", async () => {
    const url = new URL(emu.authorizeUrl);
    url.searchParams.set("client_id", emu.clientId);
    url.searchParams.set("scope", "commands,chat:write");
    url.searchParams.set("user_scope", "users:read");
    url.searchParams.set("state", "st-123");
    url.searchParams.set("redirect_uri", "https://app.example/slack/oauth_redirect");
    const res = await fetch(url, { redirect: "manual" });
    expect(res.status).toBe(302);
    const back = new URL(res.headers.get("location")!);
    expect(`${back.origin}${back.pathname}`).toBe("https://app.example/slack/oauth_redirect");
    expect(back.searchParams.get("state")).toBe("st-123");
    const code = back.searchParams.get("code")!;

    const anon = client();
    const bad = await slackError(
      anon.oauth.v2.access({ client_id: emu.clientId, client_secret: "wrong", code }),
    );
    expect(bad.error).toBe("bad_client_secret");
    const r = await anon.oauth.v2.access({
      client_id: emu.clientId,
      client_secret: emu.clientSecret,
      code,
      redirect_uri: "https://app.example/slack/oauth_redirect",
    });
    expect(r).toMatchObject({
      ok: true,
      app_id: "A0ONAIR",
      token_type: "bot",
      scope: "commands,chat:write",
      bot_user_id: emu.workspace.app.botUserId,
      team: { id: "T0ONAIR", name: "On Air Playground" },
      is_enterprise_install: false,
      authed_user: { id: ADA, scope: "users:read", token_type: "user" },
    });
    expect(r.access_token).toMatch(/^xoxb-/);
    expect(r.authed_user?.access_token).toMatch(/^xoxp-/);
    expect(r.refresh_token).toBeUndefined();
    expect(
      (
        await slackError(
          anon.oauth.v2.access({ client_id: emu.clientId, client_secret: emu.clientSecret, code }),
        )
      ).error,
    ).toBe("invalid_code");

    // The installed token carries exactly the scopes asked for.
    const installed = client(r.access_token);
    expect((await installed.auth.test()).user_id).toBe(emu.workspace.app.botUserId);
    const missing = await slackError(installed.users.info({ user: ADA }));
    expect(missing).toMatchObject({ error: "missing_scope", data: { needed: "users:read" } });
    expect(
      (await slackError(installed.chat.postMessage({ channel: TOWN_HALL, text: "x" }))).error,
    ).toBe("not_in_channel");

    // Secrets never reach the call record.
    const recorded = JSON.stringify(emu.calls);
    expect(recorded).not.toContain(emu.clientSecret);
    expect(recorded).not.toContain(r.access_token);
    expect(recorded).not.toContain(emu.botToken);
  });

  it("sends the installer back with error=access_denied when they cancel", async () => {
    const url = new URL(emu.authorizeUrl);
    url.searchParams.set("client_id", emu.clientId);
    url.searchParams.set("scope", "commands");
    url.searchParams.set("state", "s");
    url.searchParams.set("redirect_uri", "https://app.example/cb");
    url.searchParams.set("deny", "1");
    const res = await fetch(url, { redirect: "manual" });
    const back = new URL(res.headers.get("location")!);
    expect(back.searchParams.get("error")).toBe("access_denied");
    expect(back.searchParams.has("code")).toBe(false);
    url.searchParams.set("client_id", "nope");
    url.searchParams.delete("deny");
    expect((await fetch(url, { redirect: "manual" })).status).toBe(400);
  });

  it("rotates tokens: refresh_token and expires_in, expiry, refresh grant", async () => {
    emu.setTokenRotation({ expiresInSec: 60 });
    try {
      const code = authorize(emu.workspace, {
        clientId: emu.clientId,
        scopes: ["chat:write"],
        userScopes: [],
        redirectUri: undefined,
      });
      const anon = client();
      const r = await anon.oauth.v2.access({
        client_id: emu.clientId,
        client_secret: emu.clientSecret,
        code,
      });
      expect(r.expires_in).toBe(60);
      expect(r.refresh_token).toMatch(/^xoxe-1-/);
      expect(r.access_token).toMatch(/^xoxe\.xoxb-/);
      clock += 61_000;
      expect((await slackError(client(r.access_token).auth.test())).error).toBe("token_expired");
      const refreshed = await anon.oauth.v2.access({
        client_id: emu.clientId,
        client_secret: emu.clientSecret,
        grant_type: "refresh_token",
        refresh_token: r.refresh_token!,
      });
      expect(refreshed).toMatchObject({ token_type: "bot", expires_in: 60, scope: "chat:write" });
      expect((await client(refreshed.access_token).auth.test()).ok).toBe(true);
      // A new refresh token each time; the one spent is dead (two refreshing at once fork it).
      expect(refreshed.refresh_token).toMatch(/^xoxe-1-/);
      expect(refreshed.refresh_token).not.toBe(r.refresh_token);
      expect(
        (
          await slackError(
            anon.oauth.v2.access({
              client_id: emu.clientId,
              client_secret: emu.clientSecret,
              grant_type: "refresh_token",
              refresh_token: r.refresh_token!,
            }),
          )
        ).error,
      ).toBe("invalid_refresh_token");
      expect(
        (
          await slackError(
            anon.oauth.v2.access({
              client_id: emu.clientId,
              client_secret: emu.clientSecret,
              grant_type: "refresh_token",
              refresh_token: "xoxe-1-nope",
            }),
          )
        ).error,
      ).toBe("invalid_refresh_token");
    } finally {
      emu.setTokenRotation(undefined);
    }
  });
});

describe("oauth.v2.exchange", () => {
  it("moves a long-lived token over to rotation once, and only when rotation is on", async () => {
    const anon = client();
    const args = { client_id: emu.clientId, client_secret: emu.clientSecret, token: emu.botToken };
    expect((await slackError(anon.oauth.v2.exchange(args))).error).toBe(
      "token_rotation_not_enabled",
    );
    emu.setTokenRotation({ expiresInSec: 120 });
    try {
      expect(
        (await slackError(anon.oauth.v2.exchange({ ...args, client_secret: "x" }))).error,
      ).toBe("bad_client_secret");
      const moved = await anon.oauth.v2.exchange(args);
      expect(moved.access_token).toMatch(/^xoxe\.xoxb-/);
      expect(moved.refresh_token).toMatch(/^xoxe-1-/);
      expect(moved.expires_in).toBe(120);
      expect((await slackError(anon.oauth.v2.exchange(args))).error).toBe(
        "token_already_exchanged",
      );
      // The long-lived token keeps working meanwhile.
      expect((await bot.auth.test()).ok).toBe(true);
    } finally {
      emu.setTokenRotation(undefined);
    }
  });
});

describe("response_url and the read API", () => {
  it("applies in_channel, ephemeral, replace_original and delete_original, five uses at most", async () => {
    const card = await bot.chat.postMessage({ channel: EVENTS, text: "card" });
    const url = emu.workspace.createResponseUrl({
      channel: EVENTS,
      user: OMAR,
      messageTs: card.ts!,
    });
    const post = (body: unknown) =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    expect((await post({ text: "just you" })).status).toBe(200);
    expect(emu.workspace.ephemeralsFor({ channel: EVENTS, user: OMAR }).at(-1)).toMatchObject({
      text: "just you",
      via: "response_url",
    });
    await post({ response_type: "in_channel", text: "everyone" });
    expect(emu.workspace.topLevel(EVENTS).at(-1)?.text).toBe("everyone");
    await post({ replace_original: true, text: "card v2" });
    expect(emu.workspace.findMessage(emu.workspace.channels.get(EVENTS)!, card.ts!)?.text).toBe(
      "card v2",
    );
    await post({ delete_original: true });
    expect(
      emu.workspace.findMessage(emu.workspace.channels.get(EVENTS)!, card.ts!),
    ).toBeUndefined();
    expect((await post({ text: "fifth" })).status).toBe(200);
    const sixth = await post({ text: "too many" });
    expect(sixth.status).toBe(404);
    expect(await sixth.json()).toEqual({ ok: false, error: "used_url" });
    const bad = await fetch(`${emu.origin}/response/T0ONAIR/nope/nope`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(bad.status).toBe(404);
    expect(emu.calls.filter((c) => c.method === "response_url").length).toBeGreaterThanOrEqual(6);
  });

  it("serves the workspace state without any token", async () => {
    const res = await fetch(`${emu.origin}/_emulator/state`);
    const text = await res.text();
    const state = JSON.parse(text) as {
      team: { id: string };
      channels: { id: string; messages: unknown[] }[];
    };
    expect(state.team.id).toBe("T0ONAIR");
    expect(state.channels.find((c) => c.id === EVENTS)?.messages.length).toBeGreaterThan(0);
    expect(text).not.toContain(emu.botToken);
  });

  it("records calls with redacted tokens and parsed blocks, and waits for one", async () => {
    const since = emu.calls.at(-1)?.seq ?? 0;
    const waiting = emu.waitForCall(
      (c) => c.method === "chat.postMessage" && c.args.text === "awaited",
      { since },
    );
    await bot.chat.postMessage({
      channel: GENERAL,
      text: "awaited",
      token: emu.botToken,
      blocks: [{ type: "divider" }],
    });
    const call = await waiting;
    expect(call).toMatchObject({ ok: true, status: 200, tokenKind: "bot", time: clock });
    expect(call.args.token).toBe("[redacted]");
    expect(call.args.blocks).toEqual([{ type: "divider" }]);
  });
});
