import type { WebClient } from "@slack/web-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SlackEmulator } from "../src/index.ts";
import { emulatorWithBot, slackError } from "./helpers.ts";

// Slack's current upload flow and chat.unfurl, over real HTTP with the real WebClient.

let emu: SlackEmulator;
let bot: WebClient;
const EVENTS = "C0EVENTS";
const TOWN_HALL = "C0TOWNHALL";
const MIA = "U0MIA0MEMBER";

beforeAll(async () => {
  ({ emu, bot } = await emulatorWithBot("s"));
  emu.setAppUrl("http://127.0.0.1:9");
});
afterAll(async () => {
  await emu.close();
});

async function upload(name: string, bytes: Buffer): Promise<string> {
  const res = await bot.files.getUploadURLExternal({ filename: name, length: bytes.length });
  expect(res.upload_url?.startsWith(emu.origin)).toBe(true);
  const put = await fetch(res.upload_url!, { method: "POST", body: bytes });
  expect(put.status).toBe(200);
  return res.file_id!;
}

describe("files.getUploadURLExternal + upload + files.completeUploadExternal", () => {
  it("shares the uploaded files into a thread as one message with the comment", async () => {
    const parent = await bot.chat.postMessage({ channel: EVENTS, text: "card" });
    const a = await upload("a.png", Buffer.from([137, 80, 78, 71]));
    const b = await upload("b.csv", Buffer.from("x,y\r\n1,2\r\n"));
    const done = await bot.files.completeUploadExternal({
      files: [{ id: a, title: "Chart" }, { id: b }],
      channel_id: EVENTS,
      thread_ts: parent.ts!,
      initial_comment: "*Report*",
    });
    expect(done.files?.map((f) => f.id)).toEqual([a, b]);
    // Slack shares asynchronously: answered first, in the thread a moment later.
    expect(emu.workspace.replies(EVENTS, parent.ts!)).toEqual([]);
    await emu.sharesLanded();
    const [reply] = emu.workspace.replies(EVENTS, parent.ts!);
    expect(reply?.text).toBe("*Report*");
    const files = reply?.files as Array<{ id: string; url_private: string; mimetype: string }>;
    expect(files.map((f) => f.mimetype)).toEqual(["image/png", "text/csv"]);
    const csv = await fetch(files[1]!.url_private);
    expect(await csv.text()).toBe("x,y\r\n1,2\r\n");
    // A file is completed once.
    expect((await slackError(bot.files.completeUploadExternal({ files: [{ id: a }] }))).error).toBe(
      "file_not_found",
    );
  });

  it("refuses what Slack refuses: no bytes yet, an unknown id, a channel the bot is not in, a bad length", async () => {
    const res = await bot.files.getUploadURLExternal({ filename: "c.csv", length: 3 });
    expect(
      (await slackError(bot.files.completeUploadExternal({ files: [{ id: res.file_id! }] }))).error,
    ).toBe("file_not_found");
    expect(
      (await slackError(bot.files.completeUploadExternal({ files: [{ id: "FNOPE" }] }))).error,
    ).toBe("file_not_found");
    const id = await upload("d.csv", Buffer.from("abc"));
    expect(
      (
        await slackError(
          bot.files.completeUploadExternal({ files: [{ id }], channel_id: TOWN_HALL }),
        )
      ).error,
    ).toBe("not_in_channel");
    expect(
      (await slackError(bot.files.getUploadURLExternal({ filename: "e.csv", length: 0 }))).error,
    ).toBe("invalid_arguments");
    const put = await fetch(`${emu.origin}/upload/v1/FNOPE`, { method: "POST", body: "x" });
    expect(put.status).toBe(404);
  });

  it("refuses a share the channel's posting limits forbid, and blocks Slack would not take", async () => {
    const events = emu.workspace.resolveChannel(EVENTS)!;
    const parent = await bot.chat.postMessage({ channel: EVENTS, text: "card" });
    const share = async (extra: Record<string, unknown>) => {
      const id = await upload("r.csv", Buffer.from("a,b"));
      return bot.files.completeUploadExternal({ files: [{ id }], channel_id: EVENTS, ...extra });
    };
    try {
      events.posting = "read_only";
      expect((await slackError(share({ thread_ts: parent.ts! }))).error).toBe(
        "posting_to_channel_denied",
      );
      events.posting = "thread_only";
      expect((await slackError(share({}))).error).toBe("posting_to_channel_denied");
      // In a thread, a thread-only channel takes it.
      expect((await share({ thread_ts: parent.ts! })).ok).toBe(true);
      await emu.sharesLanded();
      events.posting = undefined;
      emu.workspace.findMessage(events, parent.ts!)!.thread_locked = true;
      expect((await slackError(share({ thread_ts: parent.ts! }))).error).toBe(
        "posting_to_channel_denied",
      );
    } finally {
      events.posting = undefined;
      emu.workspace.findMessage(events, parent.ts!)!.thread_locked = false;
    }
    const bad = await slackError(share({ blocks: [{ type: "section" }] }));
    expect(bad.error).toBe("invalid_blocks");
    expect(JSON.stringify(bad)).toContain("/blocks/0");
    // Nothing refused was shared.
    expect(emu.workspace.replies(EVENTS, parent.ts!)).toHaveLength(1);
  });
});

describe("link_shared and chat.unfurl", () => {
  it("sends link_shared for the app's domains only and takes unfurls of those links only", async () => {
    const shared = await emu.driver.postMessage({
      user: MIA,
      channel: EVENTS,
      text: "see <https://live.example.com/123> and https://other.example.org/x",
      unfurlDomains: ["live.example.com"],
    });
    const delivered = shared.result?.payload as {
      event: { type: string; links: Array<{ url: string }>; unfurl_id: string };
    };
    expect(delivered.event.type).toBe("link_shared");
    expect(delivered.event.links.map((l) => l.url)).toEqual(["https://live.example.com/123"]);
    const unfurl = { "https://live.example.com/123": { blocks: [] } };
    await bot.chat.unfurl({ channel: EVENTS, ts: shared.ts, unfurls: unfurl });
    await bot.chat.unfurl({
      unfurl_id: shared.unfurlId!,
      source: "conversations_history",
      unfurls: unfurl,
    });
    const msg = emu.workspace.topLevel(EVENTS).find((m) => m.ts === shared.ts);
    expect(Object.keys(msg?.unfurls ?? {})).toEqual(["https://live.example.com/123"]);
    expect(
      (
        await slackError(
          bot.chat.unfurl({
            channel: EVENTS,
            ts: shared.ts,
            unfurls: { "https://other.example.org/x": { blocks: [] } },
          }),
        )
      ).error,
    ).toBe("cannot_unfurl_url");
    expect(
      (await slackError(bot.chat.unfurl({ channel: EVENTS, ts: "1.000", unfurls: unfurl }))).error,
    ).toBe("cannot_find_message");
    // An unfurl's blocks are checked as a message's: Slack answers invalid_blocks, and keeps the
    // earlier unfurl.
    const badBlocks = await slackError(
      bot.chat.unfurl({
        channel: EVENTS,
        ts: shared.ts,
        unfurls: { "https://live.example.com/123": { blocks: [{ type: "header" }] } },
      }),
    );
    expect(badBlocks.error).toBe("invalid_blocks");
    expect(JSON.stringify(badBlocks)).toContain(
      "/unfurls/https:~1~1live.example.com~1123/blocks/0",
    );
    expect(emu.workspace.topLevel(EVENTS).find((m) => m.ts === shared.ts)?.unfurls).toEqual(unfurl);
    expect(
      (await slackError(bot.chat.unfurl({ ts: shared.ts, unfurls: unfurl } as never))).error,
    ).toBe("missing_channel");
    const none = await emu.driver.postMessage({
      user: MIA,
      channel: EVENTS,
      text: "nothing here https://other.example.org/y",
      unfurlDomains: ["live.example.com"],
    });
    expect(none.result).toBeUndefined();
  });
});
