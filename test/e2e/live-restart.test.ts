import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SlackEmulator, startSlackEmulator } from "../../src/playground/emulator/server.ts";
import { type SandboxServer, startSandboxServer } from "../../src/sandbox/index.ts";
import { createCipher, openStore } from "../../src/store/index.ts";
import { CHANNELS, TEAM, USERS } from "../helpers/app-harness.ts";
import {
  type ChildApp,
  digestTotals,
  eventually,
  freePort,
  type SeededEvent,
  seedExternal,
  spawnApp,
} from "../helpers/live-fixtures.ts";
import { createSecretScanner } from "../helpers/secrets.ts";

/**
 * kill -9 of the app after webhook messages were acknowledged and before they were posted:
 * after a restart on the same SQLite file each one is counted in the channel, none twice.
 * The upstream sandbox runs in this process so it outlives the app.
 */

let emulator: SlackEmulator;
let sandbox: SandboxServer;
let dir: string;
let env: Record<string, string>;
let event: SeededEvent;
const children: ChildApp[] = [];
const signingSecret = randomBytes(16).toString("hex");
const key = randomBytes(32);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "onair-live-restart-"));
  emulator = await startSlackEmulator({ signingSecret });
  sandbox = await startSandboxServer();
  const storeUrl = `sqlite://${join(dir, "onair.sqlite")}`;
  const store = await openStore(storeUrl, { cipher: createCipher(key) });
  event = await seedExternal(store, {
    team: TEAM,
    organizer: USERS.omar,
    eventsBaseUrl: sandbox.eventsBaseUrl,
    title: "Crash-proof webinar",
  });
  await store.close();
  const port = await freePort();
  env = {
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    SLACK_SIGNING_SECRET: signingSecret,
    SLACK_BOT_TOKEN: emulator.botToken,
    SLACK_API_URL: emulator.apiUrl,
    STORE_URL: storeUrl,
    ONAIR_ENCRYPTION_KEY: key.toString("base64"),
    RELAY_BASE_URL: sandbox.relayBaseUrl,
    EVENTS_BASE_URL: sandbox.eventsBaseUrl,
    LOG_LEVEL: "info",
  };
}, 30_000);

afterAll(async () => {
  for (const c of children) await c.stop().catch(() => undefined);
  await emulator?.close();
  await sandbox?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("kill -9 between the ack and the post", () => {
  it("counts every acknowledged message once after a restart", async () => {
    const first = await spawnApp(env);
    children.push(first);
    emulator.setAppUrl(first.origin);
    await emulator.driver.slashCommand({
      user: USERS.omar,
      channel: CHANNELS.events,
      text: `notify ${event.eventId} <#${CHANNELS.events}|events>`,
    });
    const ts = await eventually(
      () =>
        emulator.workspace
          .topLevel(CHANNELS.events)
          .find((m) => JSON.stringify(m.blocks ?? "").includes(event.title))?.ts,
      "the card",
    );
    // Slack now refuses everything on the channel for a long while: acknowledged, not posted.
    emulator.throttle({ channel: CHANNELS.events, times: 100_000, retryAfterSec: 120 });
    const control = sandbox.sandbox.control;
    const state = await control.setState(event.eventId, { state: "IN_EVENT" });
    expect(state.deliveries.map((d) => d.status)).toEqual([204]);
    const joins = await control.attendees(event.eventId, { count: 60, concurrency: 8 });
    expect(joins.delivered).toBe(60);
    const leaves = await control.attendees(event.eventId, {
      leave: joins.joined.slice(0, 15).map((a) => a.endpointGuid),
    });
    expect(leaves.delivered).toBe(15);
    await first.kill();
    const postedBefore = digestTotals(
      emulator.workspace
        .replies(CHANNELS.events, ts)
        .filter((m) => m.ts !== ts)
        .map((m) => m.text ?? ""),
    );
    expect(postedBefore).toEqual({ joined: 0, left: 0 });

    emulator.clearThrottles();
    const second = await spawnApp(env);
    children.push(second);
    emulator.setAppUrl(second.origin);
    const thread = () =>
      emulator.workspace
        .replies(CHANNELS.events, ts)
        .filter((m) => m.ts !== ts)
        .map((m) => m.text ?? "");
    await eventually(
      () => {
        const t = digestTotals(thread());
        return t.joined >= 60 && t.left >= 15 ? t : undefined;
      },
      "the digests after the restart",
      20_000,
    );
    await eventually(
      () =>
        JSON.stringify(
          emulator.workspace.topLevel(CHANNELS.events).find((m) => m.ts === ts)?.blocks ?? "",
        ).includes("Attendees now *45* · peak *60* · unique *60*")
          ? true
          : undefined,
      "the card's figures after the restart",
    );
    // Settled: nothing more arrives, and nothing was posted twice.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(digestTotals(thread())).toEqual({ joined: 60, left: 15 });
    const cards = emulator.workspace
      .topLevel(CHANNELS.events)
      .filter((m) => JSON.stringify(m.blocks ?? "").includes(event.title));
    expect(cards).toHaveLength(1);

    const scanner = createSecretScanner();
    for (const c of children) scanner.add("child output", c.output.join(""));
    for (const c of emulator.calls) scanner.add(`slack ${c.method}`, JSON.stringify(c.args));
    scanner.assertNoSecrets([signingSecret, emulator.botToken, key.toString("base64")]);
  });
});
