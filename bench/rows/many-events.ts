/**
 * Many live events at once on two instances sharing one Redis (issue 25): every card and digest
 * exact, outbox reads per acknowledged item, join → card p50/p99 beside one event alone in the
 * same run, and CPU per message. Both instances run in this process (engines inline, so their
 * stores' outbox counts are readable here), against one emulated Slack and one sandbox; webhooks
 * alternate between them as a balancer would.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import {
  DEFAULT_APP,
  DEFAULT_CHANNELS,
  type SlackEmulator,
  startSlackEmulator,
} from "@onair/slack-emulator";
import { request } from "undici";
import { type OnAirApp, startApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { subscribeChannel } from "../../src/domain/subscriptions.ts";
import { SANDBOX_SEEDS, startSandboxServer } from "../../src/sandbox/index.ts";
import { botScopes } from "../../src/slack/scopes.ts";
import { DEFAULT_SETTINGS } from "../../src/store/index.ts";
import { USERS } from "../harness/app.ts";
import { cpuMicros, percentile, SHORT, sleep } from "../harness/measure.ts";
import { digestTotals, seedEventIn } from "../harness/seed.ts";
import { startRedisServer } from "../harness/servers.ts";
import { fmt, type Row } from "../harness/table.ts";

const EVENTS = SHORT ? 20 : 200;
/** Workspaces (team ids in the store); the emulator's one bot token posts for each. */
const WORKSPACES = SHORT ? 4 : 20;
const JOINS = SHORT ? 4 : 10;
/** Joins timed one at a time (join → card), per phase. */
const PROBES = SHORT ? 10 : 40;

interface Target {
  eventId: string;
  channel: string;
  path: string;
  headers: Record<string, string>;
  card?: string;
  sent: number;
}

export async function manyEventsRows(rows: Row[]): Promise<void> {
  const signingSecret = randomBytes(16).toString("hex");
  const key = randomBytes(32).toString("base64");
  const channels = Array.from({ length: EVENTS }, (_, i) => ({
    id: `C0MANY${String(i).padStart(4, "0")}`,
    name: `many-${i}`,
    members: [USERS.omar, USERS.admin, DEFAULT_APP.botUserId],
  }));
  const teamOf = (i: number) => `T0MANY${String(i % WORKSPACES).padStart(2, "0")}`;
  const workspaceOfChannel = new Map(channels.map((c, i) => [c.id, teamOf(i)]));
  const emulator = await startSlackEmulator({
    signingSecret,
    seed: { botScopes: botScopes(), channels: [...DEFAULT_CHANNELS, ...channels] },
    // One emulator stands in for the 20 workspaces: Slack's tier limits (chat.update 50 a
    // minute, …) are per workspace, so each keeps its own buckets, as it would in Slack.
    rateLimits: { workspaceOf: (ch) => workspaceOfChannel.get(ch) },
  });
  const sandbox = await startSandboxServer();
  const redis = await startRedisServer();
  const dir = mkdtempSync(join(tmpdir(), "onair-many-"));
  const apps: OnAirApp[] = [];
  try {
    for (const name of ["a", "b"]) {
      apps.push(
        await startApp({
          config: loadConfig({
            PORT: "0",
            SLACK_SIGNING_SECRET: signingSecret,
            SLACK_API_URL: emulator.apiUrl,
            SLACK_BOT_TOKEN: emulator.botToken,
            STORE_URL: redis.url,
            ONAIR_ENCRYPTION_KEY: key,
            RELAY_BASE_URL: sandbox.relayBaseUrl,
            EVENTS_BASE_URL: sandbox.eventsBaseUrl,
            LOG_LEVEL: "warn",
          }),
          logDestination: new Writable({ write: (_c, _e, cb) => cb() }),
          retryPolicy: "fast",
          host: "127.0.0.1",
          dataDir: join(dir, name),
          liveEngine: "inline",
        }),
      );
    }
    const [a, b] = apps as [OnAirApp, OnAirApp];
    emulator.setAppUrl(a.origin);
    const targets: Target[] = [];
    for (let i = 0; i < EVENTS; i++) {
      const team = teamOf(i);
      if (i < WORKSPACES) await seedCredentials(a, team);
      const ch = channels[i]!;
      const t = await subscribeIn(a, team, `Many events ${i}`, ch.id);
      targets.push({
        eventId: t.eventId,
        channel: ch.id,
        path: new URL(t.url).pathname,
        headers: t.headers,
        sent: 0,
      });
    }
    for (const t of targets) {
      t.card = await waitFor(() => cardTs(emulator, t.channel), 30_000, `the card of ${t.eventId}`);
    }

    let n = 0;
    const post = async (t: Target, body: unknown) => {
      const origin = n++ % 2 === 0 ? a.origin : b.origin;
      const res = await request(`${origin}${t.path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...t.headers },
        body: JSON.stringify(body),
      });
      await res.body.dump();
      if (res.statusCode !== 204) throw new Error(`webhook answered ${res.statusCode}`);
    };
    const joinOne = (t: Target) => {
      t.sent++;
      return post(t, {
        eventId: t.eventId,
        instanceId: `${t.eventId}-i`,
        type: "ATTENDEE_INFO",
        info: {
          endpointGuid: `${t.eventId}-g${t.sent}`,
          endpointType: "WEB",
          infoType: "JOIN",
          joinTime: Date.now(),
          name: `Attendee ${t.sent}`,
        },
      });
    };
    const present = (t: Target) =>
      Number(/Attendees now \*(\d+)\*/.exec(cardText(emulator, t))?.[1] ?? -1);

    /** Each probe: one join, then the time until its card shows it. */
    const probe = async (pool: readonly Target[]): Promise<number[]> => {
      const out: number[] = [];
      for (let i = 0; i < PROBES; i++) {
        const t = pool[i % pool.length]!;
        const t0 = performance.now();
        await joinOne(t);
        const want = t.sent;
        await waitFor(
          () => (present(t) >= want ? true : undefined),
          30_000,
          `${t.eventId}'s card to show ${want} (a probe)`,
        );
        out.push(performance.now() - t0);
      }
      return out.sort((x, y) => x - y);
    };

    // One event alone first: the baseline of the same run.
    const single = targets[0]!;
    await post(single, {
      eventId: single.eventId,
      instanceId: `${single.eventId}-i`,
      type: "EVENT_STATE",
      info: { state: "IN_EVENT" },
    });
    const alone = await probe([single]);

    // Then every event live, all at once.
    const before = outboxCounts(apps);
    const cpu0 = process.cpuUsage();
    const sent0 = n;
    const t0 = Date.now();
    await Promise.all(
      targets.map(async (t) => {
        if (t !== single) {
          await post(t, {
            eventId: t.eventId,
            instanceId: `${t.eventId}-i`,
            type: "EVENT_STATE",
            info: { state: "IN_EVENT" },
          });
        }
        for (let j = 0; j < JOINS; j++) await joinOne(t);
      }),
    );
    const messages = n - sent0;
    const allExact = () =>
      waitFor(
        async () =>
          targets.every(
            (t) => present(t) === t.sent && digestTotals(thread(emulator, t)).joined === t.sent,
          )
            ? true
            : undefined,
        120_000,
      ).catch(() => false);
    // Reads, items and CPU from the burst until every card and digest is exact.
    let exact = await allExact();
    const ms = Date.now() - t0;
    const cpu = cpuMicros(process.cpuUsage(cpu0));
    // The reads a drained event still costs (each engine looks at it once more 5 s after
    // clearing its marker) are counted too.
    await sleep(6_000);
    const after = outboxCounts(apps);
    const reads = after.reads - before.reads;
    const written = after.written - before.written;
    // Then joins timed one at a time, with every event live.
    const many = await probe(targets);
    exact = exact && (await allExact());
    const off = targets.filter(
      (t) => present(t) !== t.sent || digestTotals(thread(emulator, t)).joined !== t.sent,
    );
    const wrong = off.length;
    // What an inexact event shows: sent / card / digests / items still in the outbox.
    const shown = await Promise.all(
      off.slice(0, 3).map(async (t) => {
        const left = (await a.store.outbox.list()).filter((r) => r.item.eventId === t.eventId);
        return `${t.sent}/${present(t)}/${digestTotals(thread(emulator, t)).joined}/${left.length}`;
      }),
    );

    const label = `${EVENTS} live events in ${WORKSPACES} workspaces, two instances on one Redis`;
    rows.push({
      measure: `${label}: cards and digests exact (${messages} webhooks in ${fmt(ms / 1000)} s)`,
      figure: `${EVENTS - wrong} of ${EVENTS} exact${wrong ? ` (sent/card/digests/outbox: ${shown.join(", ")})` : ""}`,
      baseline: `${EVENTS}`,
      ratio: fmt((EVENTS - wrong) / EVENTS, 2),
      bar: "every one",
      met: exact === true && wrong === 0,
    });
    rows.push({
      measure: `${label}: outbox reads per acknowledged item`,
      figure: fmt(reads / written, 2),
      baseline: `${reads} reads, ${written} items`,
      ratio: "-",
      bar: "≤ 2",
      met: reads / written <= 2,
    });
    const p = (s: number[], q: number) => percentile(s, q);
    rows.push({
      measure: `${label}: join → card p50 / p99 (ms, ${PROBES} joins)`,
      figure: `${fmt(p(many, 50), 0)} / ${fmt(p(many, 99), 0)}`,
      baseline: `one event alone: ${fmt(p(alone, 50), 0)} / ${fmt(p(alone, 99), 0)}`,
      ratio: fmt(p(many, 50) / p(alone, 50), 2),
      bar: "no slower (p99 ≤ 1.5× + 100 ms)",
      met: p(many, 99) <= p(alone, 99) * 1.5 + 100,
    });
    rows.push({
      measure: `${label}: process CPU per webhook (µs; both instances, Slack and the sandbox in one process)`,
      figure: fmt(cpu / messages, 0),
      baseline: `${messages} webhooks`,
      ratio: "-",
      bar: "-",
      met: undefined,
    });
  } finally {
    for (const app of apps.reverse()) await app.close().catch(() => undefined);
    await emulator.close();
    await sandbox.close();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The events app's and the relay's credentials, as an admin of `team` would save them. */
async function seedCredentials(app: OnAirApp, team: string): Promise<void> {
  await app.store.settings.put(team, {
    ...structuredClone(DEFAULT_SETTINGS),
    eventsAppKey: SANDBOX_SEEDS.events.clientId,
    eventsAppSecret: SANDBOX_SEEDS.events.clientSecret,
    relayUsername: SANDBOX_SEEDS.relay.username,
    relayPassword: SANDBOX_SEEDS.relay.password,
  });
}

/**
 * An event of `team` scheduled upstream, recorded, and `channel` subscribed through the live
 * area's own path (as harness/seed.ts does for the one seeded team); returns the webhook target
 * the events service was given.
 */
async function subscribeIn(
  app: OnAirApp,
  team: string,
  title: string,
  channel: string,
): Promise<{ eventId: string; url: string; headers: Record<string, string> }> {
  const deps = app.deps;
  const { eventId: id } = await seedEventIn(app, team, title);
  const events = deps.events as { registerWebhook: (...a: never[]) => Promise<unknown> };
  const original = events.registerWebhook;
  let target: { url: string; headers: Record<string, string> } | undefined;
  events.registerWebhook = (async (...args: unknown[]) => {
    const cfg = args[3] as { url: string; headers: Record<string, string> };
    target = { url: cfg.url, headers: { ...cfg.headers } };
    return (original as (...a: unknown[]) => Promise<unknown>).apply(events, args);
  }) as typeof original;
  try {
    await subscribeChannel(deps, { team, eventId: id, channel, user: USERS.omar });
  } finally {
    events.registerWebhook = original;
  }
  if (!target) throw new Error("no webhook was registered");
  return { eventId: id, ...target };
}

function outboxCounts(apps: readonly OnAirApp[]): { reads: number; written: number } {
  let reads = 0;
  let written = 0;
  for (const app of apps) {
    const c = app.store.outbox.counts();
    reads += c.reads;
    written += c.written;
  }
  return { reads, written };
}

function cardTs(emulator: SlackEmulator, channel: string): string | undefined {
  return emulator.workspace.topLevel(channel).find((m) => Array.isArray(m.blocks))?.ts;
}

function cardText(emulator: SlackEmulator, t: Target): string {
  return JSON.stringify(
    emulator.workspace.topLevel(t.channel).find((m) => m.ts === t.card)?.blocks ?? "",
  );
}

function thread(emulator: SlackEmulator, t: Target): string[] {
  if (!t.card) return [];
  return emulator.workspace
    .replies(t.channel, t.card)
    .filter((m) => m.ts !== t.card)
    .map((m) => m.text ?? "");
}

async function waitFor<T>(
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs: number,
  what = "every card and digest to be exact",
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}
