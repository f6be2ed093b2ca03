import type { WebClient } from "@slack/web-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callsOf, type SlackEmulator, validateBlocks } from "../src/index.ts";
import { emulatorWithBot, slackError } from "./helpers.ts";

// The Calls API held to Slack's reference: calls.add with a bot token needs created_by; ids,
// participants, the end, and the call block.

let emu: SlackEmulator;
let bot: WebClient;
const MIA = "U0MIA0MEMBER";

beforeAll(async () => {
  ({ emu, bot } = await emulatorWithBot("s"));
});
afterAll(async () => {
  await emu.close();
});

/** The error Slack answered. */
const code = async (p: Promise<unknown>) => (await slackError(p)).error;

const add = (over: Record<string, unknown> = {}) =>
  bot.apiCall("calls.add", {
    external_unique_id: "E1:I1",
    join_url: "https://live.example.com/j/1",
    created_by: MIA,
    title: "Town hall",
    ...over,
  });

describe("calls.*", () => {
  it("needs created_by with a bot token, and a real user there", async () => {
    expect(await code(add({ created_by: undefined }))).toBe("invalid_created_by");
    expect(await code(add({ created_by: "U0NOBODY" }))).toBe("invalid_created_by");
    expect(await code(add({ date_start: "soon" }))).toBe("invalid_start_time");
  });

  it("adds, updates, takes participants in and out, ends once", async () => {
    const r = (await add()) as unknown as { call: { id: string; external_unique_id: string } };
    const id = r.call.id;
    expect(id).toMatch(/^R/);
    expect(r.call.external_unique_id).toBe("E1:I1");
    await bot.apiCall("calls.update", { id, title: "Town hall (live)" });
    await bot.apiCall("calls.participants.add", { id, users: [{ slack_id: MIA }] });
    expect(
      await code(bot.apiCall("calls.participants.add", { id, users: [{ slack_id: "U0X" }] })),
    ).toBe("user_not_found");
    expect(await code(bot.apiCall("calls.participants.add", { id, users: [{}] }))).toBe(
      "bad_users",
    );
    expect(await code(bot.apiCall("calls.participants.add", { id, users: [] }))).toBe(
      "missing_argument",
    );
    const info = (await bot.apiCall("calls.info", { id })) as unknown as {
      call: { title: string; users: unknown[] };
    };
    expect(info.call.title).toBe("Town hall (live)");
    expect(info.call.users).toEqual([{ slack_id: MIA }]);
    await bot.apiCall("calls.participants.remove", { id, users: [{ slack_id: MIA }] });
    await bot.apiCall("calls.end", { id });
    expect(await code(bot.apiCall("calls.end", { id }))).toBe("inactive_call");
    expect(
      await code(bot.apiCall("calls.participants.add", { id, users: [{ slack_id: MIA }] })),
    ).toBe("inactive_call");
    expect(await code(bot.apiCall("calls.update", { id: "R0NONE" }))).toBe("invalid_call_id");
    const kept = callsOf(emu.workspace).find((c) => c.id === id);
    expect(kept?.users).toEqual([]);
    expect(kept?.date_end).toBeDefined();
  });

  it("checks the call block's call_id", () => {
    expect(validateBlocks([{ type: "call", call_id: "R1" }]).ok).toBe(true);
    expect(validateBlocks([{ type: "call" }]).ok).toBe(false);
  });
});
