import { randomBytes } from "node:crypto";
import diagnosticsChannel from "node:diagnostics_channel";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type SlackEmulator, startSlackEmulator } from "@onair/slack-emulator";
import { expect } from "vitest";
import { liveRepo, loadEventLive, sessionsRepo } from "../../src/live/live-record.ts";
import {
  type AttendeesResult,
  type SandboxServer,
  startSandboxServer,
} from "../../src/sandbox/index.ts";
import { botScopes } from "../../src/slack/scopes.ts";
import { createCipher, openStore, type Store } from "../../src/store/index.ts";
import { CHANNELS, TEAM, USERS } from "./app-harness.ts";
import {
  type ChildApp,
  childAppEnv,
  digestTotals,
  eventually,
  type SeededEvent,
  seedExternal,
  spawnApp,
} from "./live-fixtures.ts";

/**
 * The stage of the tests that run the app in child processes (kill -9, two instances on one
 * store) and drive webhook bursts at it: a Slack emulator and an upstream sandbox in this
 * process (so they outlive the app), one event seeded in the store, and the children spawned.
 */

export interface LiveStage {
  readonly emulator: SlackEmulator;
  readonly sandbox: SandboxServer;
  readonly event: SeededEvent;
  /** `event` and any `moreTitles` seeded beside it, in that order. */
  readonly events: SeededEvent[];
  readonly signingSecret: string;
  /** The store's encryption key. */
  readonly key: Buffer;
  /** Every child spawned, in order. */
  readonly children: ChildApp[];
  /** A child's environment: it listens on `port` and is reached at `publicUrl` (default: the port). */
  childEnv(opts: {
    port: number;
    publicUrl?: string;
    logLevel: "info" | "warn";
  }): Record<string, string>;
  /** Spawns a child and keeps it for close(). */
  spawn(env: Record<string, string>): Promise<ChildApp>;
  /** Subscribes the events channel to the event (default: the first) through the app at `origin`; the card's ts. */
  notify(origin: string, event?: SeededEvent): Promise<string>;
  /** The events channel as the tests read it: the card `ts` and its thread. */
  view(ts: string): ChannelView;
  /**
   * Waits until the app has applied `count` attendees of the event (default: the first) to its
   * stored figures, whatever Slack has been told yet: an acknowledged message is applied later,
   * by the live engine, and on a loaded machine noticeably later.
   */
  waitApplied(count: number, which?: SeededEvent): Promise<void>;
  /** Stops the children, the emulator and the sandbox, and removes the temporary store. */
  close(): Promise<void>;
}

export interface ChannelView {
  /** The texts of the card's thread (the digests), the card itself left out. */
  thread(): string[];
  /** The card's blocks, as JSON. */
  card(): string;
  /** The "unique *N*" figure of the card (0 before there is one). */
  unique(): number;
  /** How many top-level messages of the channel carry the event's title. */
  cardCount(): number;
}

/**
 * Starts the emulator and the sandbox and seeds the event into the store at `storeUrl` (by
 * default a fresh SQLite file in a temporary folder, removed by close()).
 */
export async function startLiveStage(opts: {
  title: string;
  /** More events to seed beside the first (for several events in one channel). */
  moreTitles?: readonly string[];
  storeUrl?: string;
  tmpPrefix?: string;
  /** The emulator's own clock (its rate buckets run on it). */
  emulatorNow?: () => number;
}): Promise<LiveStage> {
  const signingSecret = randomBytes(16).toString("hex");
  const key = randomBytes(32);
  const dir =
    opts.storeUrl === undefined
      ? mkdtempSync(join(tmpdir(), opts.tmpPrefix ?? "onair-live-stage-"))
      : undefined;
  const storeUrl = opts.storeUrl ?? `sqlite://${join(dir ?? "", "onair.sqlite")}`;
  const emulator = await startSlackEmulator({
    signingSecret,
    seed: { botScopes: botScopes() },
    ...(opts.emulatorNow ? { now: opts.emulatorNow } : {}),
  });
  const sandbox = await startSandboxServer();
  const store = await openStore(storeUrl, { cipher: createCipher(key) });
  const events: SeededEvent[] = [];
  for (const title of [opts.title, ...(opts.moreTitles ?? [])]) {
    events.push(
      await seedExternal(store, {
        team: TEAM,
        organizer: USERS.omar,
        eventsBaseUrl: sandbox.eventsBaseUrl,
        title,
      }),
    );
  }
  const event = events[0] as SeededEvent;
  await store.close();
  const children: ChildApp[] = [];

  const view = (ts: string): ChannelView => {
    const card = () =>
      JSON.stringify(
        emulator.workspace.topLevel(CHANNELS.events).find((m) => m.ts === ts)?.blocks ?? "",
      );
    return {
      thread: () =>
        emulator.workspace
          .replies(CHANNELS.events, ts)
          .filter((m) => m.ts !== ts)
          .map((m) => m.text ?? ""),
      card,
      unique: () => Number(/unique \*(\d+)\*/.exec(card())?.[1] ?? 0),
      cardCount: () =>
        emulator.workspace
          .topLevel(CHANNELS.events)
          .filter((m) => JSON.stringify(m.blocks ?? "").includes(event.title)).length,
    };
  };

  let reader: Store | undefined;
  const waitApplied = async (count: number, which = event): Promise<void> => {
    reader ??= await openStore(storeUrl, { cipher: createCipher(key) });
    const r = reader;
    const lives = r.repository(liveRepo);
    const sessions = r.repository(sessionsRepo);
    await eventually(
      async () => {
        const { live } = await loadEventLive(lives, sessions, TEAM, which.eventId);
        return (live.current()?.sessions.size ?? 0) >= count ? true : undefined;
      },
      `${count} attendees applied`,
      30_000,
    );
  };

  return {
    emulator,
    sandbox,
    event,
    events,
    waitApplied,
    signingSecret,
    key,
    children,
    childEnv({ port, publicUrl, logLevel }) {
      return childAppEnv({
        port,
        publicUrl: publicUrl ?? `http://127.0.0.1:${port}`,
        signingSecret,
        emulator,
        sandbox,
        storeUrl,
        key,
        logLevel,
      });
    },
    async spawn(env) {
      const child = await spawnApp(env);
      children.push(child);
      return child;
    },
    async notify(origin, which = event) {
      emulator.setAppUrl(origin);
      await emulator.driver.slashCommand({
        user: USERS.omar,
        channel: CHANNELS.events,
        text: `notify ${which.eventId} <#${CHANNELS.events}|events>`,
        // Already in the form Slack sends (should_escape), not as typed.
        escaped: true,
      });
      return eventually(
        () =>
          emulator.workspace
            .topLevel(CHANNELS.events)
            .find((m) => JSON.stringify(m.blocks ?? "").includes(which.title))?.ts,
        "the card",
        // A child just started posts its first card after its engine thread has started too.
        30_000,
      );
    },
    view,
    async close() {
      for (const c of children) await c.stop().catch(() => undefined);
      await reader?.close().catch(() => undefined);
      await emulator.close();
      await sandbox.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** How long the channel must stay quiet before the final counts are taken. */
const SETTLE_MS = 1_500;

/**
 * Waits for the digests to reach `joined`/`left` and the card to show `now`/`peak`/`unique`,
 * lets the channel settle, then asserts the digests add up to exactly `joined`/`left` (nothing
 * lost, nothing posted twice) on one card.
 */
export async function expectExactCounts(
  stage: LiveStage,
  ts: string,
  want: { joined: number; left: number; now: number; peak: number; unique: number },
  context: string,
  digestTimeoutMs = 20_000,
): Promise<void> {
  const view = stage.view(ts);
  await eventually(
    () => {
      const t = digestTotals(view.thread());
      if (t.joined >= want.joined && t.left >= want.left) return t;
      // Thrown, so a timeout says how far the digests got and what the children last logged.
      const tail = stage.children.at(-1)?.output.join("").split("\n").slice(-12).join("\n");
      throw new Error(
        `${t.joined} joined / ${t.left} left so far; the last child logged:\n${tail}`,
      );
    },
    `the digests ${context}`,
    digestTimeoutMs,
  );
  const figures = `Attendees now *${want.now}* · peak *${want.peak}* · unique *${want.unique}*`;
  await eventually(
    () => (view.card().includes(figures) ? true : undefined),
    `the card's figures ${context}`,
  );
  // Settled: nothing more arrives, and nothing was posted twice.
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  expect(digestTotals(view.thread())).toEqual({ joined: want.joined, left: want.left });
  expect(view.cardCount()).toBe(1);
}

/**
 * After a kill mid-burst: waits for the card to count every one of the `acked` JOINs and for the
 * digests to catch up with the card, lets the channel settle, then asserts the count is `acked`
 * plus at most `inFlight` (stored, but their 204 never reached the sender), that the digests
 * post each counted join exactly once, and that there is one card.
 */
export async function expectAckedCountedOnce(
  stage: LiveStage,
  ts: string,
  opts: { acked: number; inFlight: number; cardTimeoutMs: number; digestTimeoutMs: number },
): Promise<void> {
  const { acked } = opts;
  const view = stage.view(ts);
  await eventually(
    () => (view.unique() >= acked ? true : undefined),
    `the card counting all ${acked} acknowledged joins`,
    opts.cardTimeoutMs,
  );
  await eventually(
    () => {
      const joined = digestTotals(view.thread()).joined;
      if (joined >= view.unique()) return true;
      // Thrown, so a timeout says how far the digests got and what each child last logged.
      const tails = stage.children.map(
        (c, i) => `child ${i}:\n${c.output.join("").split("\n").slice(-8).join("\n")}`,
      );
      throw new Error(`${joined} joined in digests, card ${view.unique()}\n${tails.join("\n")}`);
    },
    "the digests",
    opts.digestTimeoutMs,
  );
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  const counted = view.unique();
  expect(counted).toBeGreaterThanOrEqual(acked);
  expect(counted).toBeLessThanOrEqual(acked + opts.inFlight);
  expect(digestTotals(view.thread()).joined).toBe(counted);
  expect(view.cardCount()).toBe(1);
}

/** The webhook messages the app at `origin` has accepted, by its /metrics (0 when unreachable). */
export async function acceptedWebhooks(origin: string): Promise<number> {
  try {
    const text = await (await fetch(`${origin}/metrics`)).text();
    return Number(/onair_webhook_messages_total\{outcome="accepted"\} (\d+)/.exec(text)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/**
 * Has the sandbox deliver `count` JOINs of the stage's event, and kills `victim` with -9 once it
 * has accepted `killAt` of them, while the rest is still being sent. Resolves when the burst is
 * over, with its result and whether the burst had already finished when the kill came.
 *
 * Deliveries straight to the victim are counted as their acks come back to the sandbox (undici's
 * diagnostics channel, in this process), and the kill goes out in that same turn: polling the
 * victim's /metrics alone could let a fast burst finish between two polls. Behind a balancer
 * (other origins), the victim's own count comes from /metrics.
 */
export async function killMidBurst(
  stage: LiveStage,
  victim: ChildApp,
  opts: { count: number; concurrency: number; killAt: number; what: string },
): Promise<{ result: AttendeesResult; finishedBeforeKill: boolean }> {
  let finished = false;
  let killed = false;
  let finishedBeforeKill = false;
  const kill = () => {
    if (killed) return;
    killed = true;
    finishedBeforeKill = finished;
    victim.proc.kill("SIGKILL");
  };
  const origin = new URL(victim.origin).origin;
  let acks = 0;
  const onHeaders = (message: unknown) => {
    const { request, response } = message as {
      request: { origin?: string | URL; path?: string };
      response: { statusCode: number };
    };
    if (!request.origin || new URL(String(request.origin)).origin !== origin) return;
    if (!request.path?.startsWith("/webhooks/") || response.statusCode >= 300) return;
    acks += 1;
    if (acks >= opts.killAt) kill();
  };
  const headers = diagnosticsChannel.channel("undici:request:headers");
  headers.subscribe(onHeaders);
  try {
    const burst = stage.sandbox.sandbox.control.attendees(stage.event.eventId, {
      count: opts.count,
      concurrency: opts.concurrency,
    });
    void burst.then(
      () => {
        finished = true;
      },
      () => undefined,
    );
    await eventually(
      async () =>
        killed || (await acceptedWebhooks(victim.origin)) >= opts.killAt ? true : undefined,
      opts.what,
      20_000,
    );
    kill();
    await victim.kill();
    return { result: await burst, finishedBeforeKill };
  } finally {
    headers.unsubscribe(onHeaders);
  }
}

export interface Balancer {
  /** Where the balancer listens: the children's PUBLIC_URL. */
  readonly url: string;
  /** Requests sent to each port first (by turn). */
  readonly hits: [number, number];
  close(): Promise<void>;
}

/**
 * A load balancer in front of two instances that alternates between them. With `failover`, a
 * request that meets a connection error goes to the other one (a health-checked LB).
 */
export async function startBalancer(
  ports: [number, number],
  opts: { failover: boolean },
): Promise<Balancer> {
  const hits: [number, number] = [0, 0];
  let turn = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const first = (turn++ % 2) as 0 | 1;
      hits[first]++;
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
      attempt(first, opts.failover ? 1 : 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
