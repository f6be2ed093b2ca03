import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { join } from "node:path";
import { type SlackEmulator, startSlackEmulator } from "@onair/slack-emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { botScopes } from "../../src/slack/scopes.ts";
import { runMain, tempDir } from "../helpers/main-process.ts";

/**
 * Start-up failures an operator fixes in the environment: each stops `npm start` with exit 1 and
 * one line naming the variable (or path) and what to do, never the library's bare words.
 */

const SECRET = "start-errors-signing-secret";
let emulator: SlackEmulator;
beforeAll(async () => {
  emulator = await startSlackEmulator({ signingSecret: SECRET, seed: { botScopes: botScopes() } });
});
afterAll(async () => {
  await emulator?.close();
});

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((done) => s.listen(0, "127.0.0.1", done));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((done) => s.close(() => done()));
  return port;
}

function slackEnv(over: Record<string, string>): Record<string, string> {
  return {
    PORT: "0",
    LOG_LEVEL: "silent",
    SLACK_BOT_TOKEN: emulator.botToken,
    SLACK_SIGNING_SECRET: SECRET,
    SLACK_API_URL: emulator.apiUrl,
    ONAIR_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
    ONAIR_SANDBOX: "1",
    STORE_URL: "memory://",
    ...over,
  };
}

async function refusal(env: Record<string, string>, cwd = tempDir()): Promise<string> {
  const p = runMain(env, cwd);
  expect(await p.exited, p.err()).toBe(1);
  const lines = p.err().trim().split("\n");
  expect(lines, p.err()).toHaveLength(1);
  expect(p.out()).not.toMatch(/serving Slack/);
  return lines[0] as string;
}

describe("start-up failures name what to fix", { timeout: 60_000 }, () => {
  it("a bot token Slack refuses names SLACK_BOT_TOKEN", async () => {
    const line = await refusal(slackEnv({ SLACK_BOT_TOKEN: "xoxb-0000-not-a-real-token" }));
    expect(line).toMatch(
      /^onair: could not start: SLACK_BOT_TOKEN was refused by Slack \(invalid_auth\)/,
    );
    expect(line).toMatch(/OAuth & Permissions/);
    expect(line).not.toContain("xoxb-0000");
  });

  it("Slack out of reach names SLACK_API_URL and the network", async () => {
    const port = await closedPort();
    const line = await refusal(slackEnv({ SLACK_API_URL: `http://127.0.0.1:${port}/api/` }));
    expect(line).toMatch(
      new RegExp(`^onair: could not start: SLACK_API_URL is http://127.0.0.1:${port}/api/`),
    );
    expect(line).toMatch(/could not be reached \(ECONNREFUSED\).*network/);
  });

  it("a data path the process cannot open names STORE_URL and the path", async () => {
    const cwd = tempDir();
    // A directory where the database file should be, and a file where its directory should be.
    mkdirSync(join(cwd, "is-a-dir"));
    writeFileSync(join(cwd, "is-a-file"), "");
    for (const path of ["is-a-dir", "is-a-file/onair.sqlite"]) {
      const line = await refusal(slackEnv({ STORE_URL: `sqlite://${path}` }), cwd);
      expect(line).toContain(`onair: could not start: STORE_URL names ${join(cwd, path)}`);
      expect(line).toMatch(/cannot create or open \((SQLITE_CANTOPEN|ENOTDIR|EEXIST)\)/);
    }
  });

  it("every bad variable at once, one line each", async () => {
    const p = runMain(
      { PORT: "abc", STORE_URL: "ftp://x", LOG_LEVEL: "loud", SLACK_BOT_TOKEN: "xoxb-1" },
      tempDir(),
    );
    expect(await p.exited).toBe(1);
    const lines = p.err().trim().split("\n");
    expect(lines.map((l) => /configuration error: (\w+)/.exec(l)?.[1])).toEqual([
      "PORT",
      "SLACK_SIGNING_SECRET",
      "STORE_URL",
      "ONAIR_ENCRYPTION_KEY",
      "RELAY_BASE_URL",
      "LOG_LEVEL",
    ]);
  });

  it("real services with a loopback PUBLIC_URL: one line naming PUBLIC_URL", async () => {
    const line = await refusal({
      ...slackEnv({}),
      ONAIR_SANDBOX: "0",
      RELAY_BASE_URL: "https://relay.example.com",
      EVENTS_BASE_URL: "https://events.example.com",
    });
    expect(line).toMatch(
      /^onair: configuration error: PUBLIC_URL is unset, an address only this machine reaches/,
    );
  });
});
