import type { WebClient } from "@slack/web-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SlackEmulator } from "../src/index.ts";
import { emulatorWithBot } from "./helpers.ts";

// A slow call, both ways: answered late after taking effect at once (the answer slow on the way
// back), or taking effect late (the request slow on the way in), over real HTTP.

const EVENTS = "C0EVENTS";
let emu: SlackEmulator;
let bot: WebClient;

beforeAll(async () => {
  ({ emu, bot } = await emulatorWithBot("emulator-slow-secret"));
});
afterAll(async () => {
  await emu?.close();
});

const texts = async () =>
  ((await bot.conversations.history({ channel: EVENTS })).messages ?? []).map((m) => m.text);
const settled = <T>(p: Promise<T>) => {
  let done = false;
  void p.then(() => {
    done = true;
  });
  return () => done;
};
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("a slow call", () => {
  it("takes effect at once by default; only its answer is late", async () => {
    emu.slow({ method: "chat.postMessage", channel: EVENTS, times: 1, ms: 400 });
    const post = bot.chat.postMessage({ channel: EVENTS, text: "answered late" });
    const answered = settled(post);
    await pause(150);
    expect(await texts()).toContain("answered late");
    expect(answered()).toBe(false);
    expect((await post).ts).toBeDefined();
  });

  it("with takesEffect late is nowhere to be read until it lands, then answered at once", async () => {
    const arrived = emu.slow({
      method: "chat.postMessage",
      channel: EVENTS,
      times: 1,
      ms: 400,
      takesEffect: "late",
    });
    const met = settled(arrived);
    // A call the rule does not name does not meet it.
    await bot.chat.postMessage({ channel: "general", text: "elsewhere" });
    await pause(20);
    expect(met()).toBe(false);
    const since = emu.calls.length;
    const post = bot.chat.postMessage({ channel: EVENTS, text: "lands late" });
    // The slow call has arrived (the rule says so): it is held, not yet seen.
    await arrived;
    expect(await texts()).not.toContain("lands late");
    expect(emu.calls.slice(since).some((c) => c.method === "chat.postMessage")).toBe(false);
    const { ts } = await post;
    const read = (await bot.conversations.history({ channel: EVENTS })).messages ?? [];
    expect(read.find((m) => m.text === "lands late")?.ts).toBe(ts);
    // Spent once: the next post lands at once.
    const next = bot.chat.postMessage({ channel: EVENTS, text: "at once" });
    await next;
    expect(await texts()).toContain("at once");
  });

  it("refuses an error that says the call may have happened, with a late landing", () => {
    expect(() =>
      emu.slow({ times: 1, ms: 10, error: "internal_error", takesEffect: "late" }),
    ).toThrow(/answered at once/);
  });
});
