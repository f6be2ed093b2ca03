import { randomBytes } from "node:crypto";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
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
import { FULL, NO_REDIS_SERVER, startPrivateRedis } from "./fault-helpers.ts";

/**
 * Two instances on one Redis behind a balancer (test/e2e/live-scaleout.test.ts shows them
 * sharing the work); here one is killed with -9 mid-burst. The balancer sends on to the
 * survivor, which takes over the event once the dead one's lease runs out: every acknowledged
 * JOIN is counted, none posted twice, one card.
 */

const COUNT = FULL ? 6_000 : 1_000;
const CONCURRENCY = 8;

let redis: { url: string; stop(): Promise<void> };
let emulator: SlackEmulator;
let sandbox: SandboxServer;
let balancer: Server;
let event: SeededEvent;
let envA: Record<string, string>;
let envB: Record<string, string>;
const children: ChildApp[] = [];
const signingSecret = randomBytes(16).toString("hex");
const key = randomBytes(32);

/** Forwards to one instance, alternating; on a connection error, to the other (health-checked LB). */
function startBalancer(ports: [number, number]): Server {
  let turn = 0;
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const first = turn++ % 2;
      const attempt = (i: number, left: number) => {
        const up = request(
          {
            host: "127.0.0.1",
            port: ports[i],
            path: req.url,
            method: req.method,
            headers: req.headers,
          },
          (r) => {
            res.writeHead(r.statusCode ?? 502, r.headers);
            r.pipe(res);
          },
        );
        up.on("error", () => {
          if (left > 0 && !res.headersSent) attempt(1 - i, left - 1);
          else if (!res.headersSent) res.writeHead(502).end();
          else res.destroy();
        });
        up.end(body);
      };
      attempt(first, 1);
    });
  });
}

beforeAll(async () => {
  if (NO_REDIS_SERVER) return;
  redis = await startPrivateRedis();
  emulator = await startSlackEmulator({ signingSecret });
  sandbox = await startSandboxServer();
  const store = await openStore(redis.url, { cipher: createCipher(key) });
  event = await seedExternal(store, {
    team: TEAM,
    organizer: USERS.omar,
    eventsBaseUrl: sandbox.eventsBaseUrl,
    title: "Half the fleet gone",
  });
  await store.close();
  const ports: [number, number] = [await freePort(), await freePort()];
  balancer = startBalancer(ports);
  await new Promise<void>((resolve) => balancer.listen(0, "127.0.0.1", () => resolve()));
  const common = {
    PUBLIC_URL: `http://127.0.0.1:${(balancer.address() as AddressInfo).port}`,
    SLACK_SIGNING_SECRET: signingSecret,
    SLACK_BOT_TOKEN: emulator.botToken,
    SLACK_API_URL: emulator.apiUrl,
    STORE_URL: redis.url,
    ONAIR_ENCRYPTION_KEY: key.toString("base64"),
    RELAY_BASE_URL: sandbox.relayBaseUrl,
    EVENTS_BASE_URL: sandbox.eventsBaseUrl,
    LOG_LEVEL: "warn",
  };
  envA = { ...common, PORT: String(ports[0]) };
  envB = { ...common, PORT: String(ports[1]) };
}, 30_000);

afterAll(async () => {
  for (const c of children) await c.stop().catch(() => undefined);
  await new Promise<void>((resolve) => (balancer ? balancer.close(() => resolve()) : resolve()));
  await emulator?.close();
  await sandbox?.close();
  await redis?.stop();
});

async function accepted(origin: string): Promise<number> {
  try {
    const text = await (await fetch(`${origin}/metrics`)).text();
    return Number(/onair_webhook_messages_total\{outcome="accepted"\} (\d+)/.exec(text)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

describe.skipIf(NO_REDIS_SERVER)("two instances on one Redis, one killed mid-burst", () => {
  it("the survivor counts every acknowledged join once, on one card", async () => {
    const [a, b] = await Promise.all([spawnApp(envA), spawnApp(envB)]);
    children.push(a, b);
    emulator.setAppUrl(a.origin);
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
    // Slash commands and interactions now reach the survivor.
    emulator.setAppUrl(b.origin);
    const control = sandbox.sandbox.control;
    await control.setState(event.eventId, { state: "IN_EVENT" });
    const burst = control.attendees(event.eventId, { count: COUNT, concurrency: CONCURRENCY });
    let finished = false;
    void burst.then(() => {
      finished = true;
    });
    await eventually(
      async () => ((await accepted(a.origin)) >= COUNT / 20 ? true : undefined),
      "A's first acknowledgements",
      20_000,
    );
    // Mid-burst for real: the sandbox is still delivering when A dies.
    expect(finished).toBe(false);
    await a.kill();
    const result = await burst;
    // The balancer moved on to B: deliveries went on after the kill, a few may have failed.
    expect(result.delivered).toBeGreaterThan(COUNT / 2);
    const acked = result.delivered;

    const card = () =>
      JSON.stringify(
        emulator.workspace.topLevel(CHANNELS.events).find((m) => m.ts === ts)?.blocks ?? "",
      );
    const unique = () => Number(/unique \*(\d+)\*/.exec(card())?.[1] ?? 0);
    const thread = () =>
      emulator.workspace
        .replies(CHANNELS.events, ts)
        .filter((m) => m.ts !== ts)
        .map((m) => m.text ?? "");
    // The dead instance's lease (10 s) must run out before the survivor takes the event over.
    await eventually(
      () => (unique() >= acked ? true : undefined),
      `the card counting all ${acked} acknowledged joins`,
      40_000,
    );
    await eventually(
      () => (digestTotals(thread()).joined >= unique() ? true : undefined),
      "the digests",
      20_000,
    );
    await new Promise((r) => setTimeout(r, 1_500));
    const counted = unique();
    expect(counted).toBeGreaterThanOrEqual(acked);
    expect(counted).toBeLessThanOrEqual(acked + CONCURRENCY);
    expect(digestTotals(thread()).joined).toBe(counted);
    const cards = emulator.workspace
      .topLevel(CHANNELS.events)
      .filter((m) => JSON.stringify(m.blocks ?? "").includes(event.title));
    expect(cards).toHaveLength(1);
  }, 90_000);
});
