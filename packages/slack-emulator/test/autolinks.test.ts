import { WebClient } from "@slack/web-api";
import { describe, expect, it } from "vitest";
import {
  autolinkedUrls,
  autolinksInText,
  linkedAsStored,
  startSlackEmulator,
} from "../src/index.ts";
import { ALL_TEST_SCOPES, quietLogger } from "./helpers.ts";

describe("what Slack links on its own", () => {
  it("finds bare URLs, www. and common domains, not the links the app wrote", () => {
    expect(
      autolinksInText(
        "see https://evil.example/x.gif, www.evil.test and evil.com/path; <https://ok.example|ok>",
      ),
    ).toEqual(["https://evil.example/x.gif,", "www.evil.test", "evil.com/path;"]);
    expect(autolinksInText("Dr. J. Smith &lt;https://a.example&gt;")).toEqual([
      "https://a.example&gt;",
    ]);
    expect(autolinksInText("Ann Alpha joined. Now 3 attending.")).toEqual([]);
  });

  it("reads the blocks when there are some (text is then only the fallback), but not verbatim text", () => {
    const text = "Bob https://evil.example joined";
    expect(autolinkedUrls({ text })).toEqual(["https://evil.example"]);
    const section = (verbatim: boolean) => ({
      type: "section",
      text: { type: "mrkdwn", text, verbatim },
    });
    expect(autolinkedUrls({ text, blocks: [section(false)] })).toEqual(["https://evil.example"]);
    expect(autolinkedUrls({ text, blocks: [section(true)] })).toEqual([]);
  });
});

describe("the text Slack stores", () => {
  it("wraps bare URLs and domains, leaves the app's links and a sentence's full stop", () => {
    expect(
      linkedAsStored(
        "Launch https://a.example/live. Also www.b.example, <https://c.example|c> <!here>",
      ),
    ).toEqual({
      text: "Launch <https://a.example/live>. Also <http://www.b.example|www.b.example>, <https://c.example|c> <!here>",
      linked: ["https://a.example/live", "www.b.example"],
    });
    expect(linkedAsStored("Ann joined. Now 3 attending.")).toEqual({
      text: "Ann joined. Now 3 attending.",
      linked: [],
    });
    expect(linkedAsStored("*Launch https://a.example/live*").text).toBe(
      "*Launch <https://a.example/live>*",
    );
    expect(linkedAsStored("Ask ann.a+q@mail.example.com, or https://x.example/@ann").text).toBe(
      "Ask <mailto:ann.a+q@mail.example.com|ann.a+q@mail.example.com>, or <https://x.example/@ann>",
    );
    // Storing twice changes nothing more.
    const once = linkedAsStored("see https://a.example").text;
    expect(linkedAsStored(once).text).toBe(once);
  });

  it("is what history and scheduledMessages.list give back; the links still count as Slack's", async () => {
    const emu = await startSlackEmulator({
      signingSecret: "emulator-autolinks-secret",
      seed: { botScopes: ALL_TEST_SCOPES },
      rateLimits: false,
    });
    try {
      const bot = new WebClient(emu.botToken, {
        slackApiUrl: emu.apiUrl,
        retryConfig: { retries: 0 },
        logger: quietLogger,
      });
      const text = "Prizes at https://evil.example/win";
      const posted = await bot.chat.postMessage({ channel: "C0EVENTS", text });
      expect(posted.message?.text).toBe("Prizes at <https://evil.example/win>");
      const history = await bot.conversations.history({ channel: "C0EVENTS", limit: 1 });
      expect(history.messages?.[0]?.text).toBe("Prizes at <https://evil.example/win>");
      const stored = emu.workspace.channels.get("C0EVENTS")?.messages.at(-1);
      expect(autolinkedUrls(stored!)).toEqual(["https://evil.example/win"]);

      const postAt = Math.floor(Date.now() / 1000) + 3600;
      await bot.chat.scheduleMessage({ channel: "C0EVENTS", text, post_at: postAt });
      const listed = await bot.chat.scheduledMessages.list({ channel: "C0EVENTS" });
      expect(listed.scheduled_messages?.map((m) => m.text)).toEqual([
        "Prizes at <https://evil.example/win>",
      ]);
    } finally {
      await emu.close();
    }
  });
});
