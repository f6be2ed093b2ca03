import { randomBytes } from "node:crypto";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createClient } from "@redis/client";
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

/**
 * Two app processes on one Redis behind a load balancer that alternates between them: the
 * channel shows what one process would show, with no duplicates.
 */

const REDIS = process.env.TEST_REDIS_URL;
const required = process.env.ONAIR_REQUIRE_SERVICES === "1";
// A database of its own: the app's keys carry no namespace, so they must not meet other files'.
const DB = 11;

let emulator: SlackEmulator;
let sandbox: SandboxServer;
let balancer: Server;
const hits = { a: 0, b: 0 };
const children: ChildApp[] = [];
let event: SeededEvent;
let envA: Record<string, string>;
let envB: Record<string, string>;
const signingSecret = randomBytes(16).toString("hex");
const key = randomBytes(32);

describe.skipIf(!REDIS && !required)("two instances on one Redis", () => {
  beforeAll(async () => {
    if (!REDIS) throw new Error("TEST_REDIS_URL is required (ONAIR_REQUIRE_SERVICES=1)");
    const url = new URL(REDIS);
    url.pathname = `/${DB}`;
    const storeUrl = url.toString();
    const redis = createClient({ url: storeUrl });
    await redis.connect();
    await redis.flushDb();
    await redis.close();

    emulator = await startSlackEmulator({ signingSecret });
    sandbox = await startSandboxServer();
    const store = await openStore(storeUrl, { cipher: createCipher(key) });
    event = await seedExternal(store, {
      team: TEAM,
      organizer: USERS.omar,
      eventsBaseUrl: sandbox.eventsBaseUrl,
      title: "Scaled-out all hands",
    });
    await store.close();

    const [portA, portB] = [await freePort(), await freePort()];
    let turn = 0;
    balancer = createServer((req, res) => {
      const toA = turn++ % 2 === 0;
      if (toA) hits.a++;
      else hits.b++;
      const upstream = request(
        {
          host: "127.0.0.1",
          port: toA ? portA : portB,
          path: req.url,
          method: req.method,
          headers: req.headers,
        },
        (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        },
      );
      upstream.on("error", () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => balancer.listen(0, "127.0.0.1", () => resolve()));
    const publicUrl = `http://127.0.0.1:${(balancer.address() as AddressInfo).port}`;
    const common = {
      PUBLIC_URL: publicUrl,
      SLACK_SIGNING_SECRET: signingSecret,
      SLACK_BOT_TOKEN: emulator.botToken,
      SLACK_API_URL: emulator.apiUrl,
      STORE_URL: storeUrl,
      ONAIR_ENCRYPTION_KEY: key.toString("base64"),
      RELAY_BASE_URL: sandbox.relayBaseUrl,
      EVENTS_BASE_URL: sandbox.eventsBaseUrl,
      LOG_LEVEL: "warn",
    };
    envA = { ...common, PORT: String(portA) };
    envB = { ...common, PORT: String(portB) };
  }, 30_000);

  afterAll(async () => {
    for (const c of children) await c.stop().catch(() => undefined);
    await new Promise<void>((resolve) => (balancer ? balancer.close(() => resolve()) : resolve()));
    await emulator?.close();
    await sandbox?.close();
  });

  it("posts one card and digests with exact counts while webhooks alternate", async () => {
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
    const control = sandbox.sandbox.control;
    for (const state of ["NOT_STARTED", "PREP_EVENT", "IN_EVENT"] as const) {
      const r = await control.setState(event.eventId, { state });
      expect(r.deliveries.map((d) => d.status)).toEqual([204]);
    }
    const joins = await control.attendees(event.eventId, { count: 200, concurrency: 8 });
    expect(joins.delivered).toBe(200);
    const again = await control.attendees(event.eventId, {
      leave: joins.joined.slice(0, 50).map((x) => x.endpointGuid),
      concurrency: 8,
    });
    expect(again.delivered).toBe(50);
    expect(hits.a).toBeGreaterThan(50);
    expect(hits.b).toBeGreaterThan(50);

    const thread = () =>
      emulator.workspace
        .replies(CHANNELS.events, ts)
        .filter((m) => m.ts !== ts)
        .map((m) => m.text ?? "");
    await eventually(
      () => {
        const t = digestTotals(thread());
        return t.joined >= 200 && t.left >= 50 ? t : undefined;
      },
      "digests from both instances",
      20_000,
    );
    await eventually(
      () =>
        JSON.stringify(
          emulator.workspace.topLevel(CHANNELS.events).find((m) => m.ts === ts)?.blocks ?? "",
        ).includes("Attendees now *150* · peak *200* · unique *200*")
          ? true
          : undefined,
      "the card's figures",
    );
    await new Promise((r) => setTimeout(r, 1_500));
    expect(digestTotals(thread())).toEqual({ joined: 200, left: 50 });
    const cards = emulator.workspace
      .topLevel(CHANNELS.events)
      .filter((m) => JSON.stringify(m.blocks ?? "").includes(event.title));
    expect(cards).toHaveLength(1);
    // The card went forward only: no update ever showed an earlier state after a later one.
    const rank = (t: string) =>
      t.includes("Live now")
        ? 2
        : t.includes("Getting ready")
          ? 1
          : t.includes("Not started")
            ? 0
            : -1;
    const seen = emulator.calls
      .filter((c) => c.method === "chat.update" && c.args.ts === ts && c.ok)
      .map((c) => rank(JSON.stringify(c.args.blocks)));
    expect([...seen].sort((x, y) => x - y)).toEqual(seen);
  });
});
