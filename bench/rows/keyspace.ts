import { createClient } from "@redis/client";
import { request } from "undici";
import { type BenchApp, CHANNELS, startBenchApp } from "../harness/app.ts";
import { subscribe } from "../harness/seed.ts";
import { startRedisServer } from "../harness/servers.ts";
import type { Row } from "../harness/table.ts";

/**
 * Redis shared with 1,000,000 unrelated keys (issue 13): one idle app instance's cost to Redis
 * (Redis's own CPU over 20 s, from INFO cpu) and how long a JOIN takes to reach the card, each
 * beside the same on an empty database, in the same run. On a redis-server of the bench's own:
 * the million keys never touch the shared Redis. A listing that scanned the keyspace would make
 * the idle figure grow with the keys (it did: 7 s of Redis CPU in 20 s); the index keeps it flat.
 */

const UNRELATED = 1_000_000;
const IDLE_MS = 20_000;
const JOINS = 8;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a");

type Raw = ReturnType<typeof createClient>;

/** Redis's CPU time so far (user + system, all its threads), in ms. */
async function redisCpuMs(raw: Raw): Promise<number> {
  const info = String(await raw.info("cpu"));
  const get = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, "m").exec(info)?.[1] ?? 0);
  return (get("used_cpu_user") + get("used_cpu_sys")) * 1000;
}

/** The commands Redis ran for its clients since the last reset: calls, and ms inside them. */
async function commandTime(raw: Raw): Promise<{ calls: number; ms: number }> {
  const info = String(await raw.info("commandstats"));
  let calls = 0;
  let usec = 0;
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    // The bench's own INFO and CONFIG calls are not the app's.
    if (m[1] === "info" || m[1]?.startsWith("config")) continue;
    calls += Number(m[2]);
    usec += Number(m[3]);
  }
  return { calls, ms: usec / 1000 };
}

/**
 * One idle instance over IDLE_MS: Redis's whole CPU (its own housekeeping included) and the
 * time spent in the commands the instance sent, which is what the keyspace could make grow.
 */
async function idle(raw: Raw): Promise<{ total: number; commands: { calls: number; ms: number } }> {
  await raw.configResetStat();
  const before = await redisCpuMs(raw);
  await sleep(IDLE_MS);
  const total = (await redisCpuMs(raw)) - before;
  return { total, commands: await commandTime(raw) };
}

/** The card's "unique *N*" figure. */
function cardUnique(h: BenchApp, ts: string): number {
  const card = h.emulator.workspace.topLevel(CHANNELS.events).find((m) => m.ts === ts);
  return Number(/unique \*(\d+)\*/.exec(JSON.stringify(card?.blocks ?? ""))?.[1] ?? 0);
}

/** Sends JOINs one at a time and times each until the card counts it (ms). */
async function joinsToCard(
  h: BenchApp,
  target: { url: string; headers: Record<string, string>; eventId: string },
  ts: string,
  first: number,
): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < JOINS; i++) {
    const n = first + i;
    const want = cardUnique(h, ts) + 1;
    const t0 = performance.now();
    const res = await request(target.url, {
      method: "POST",
      headers: { ...target.headers, "content-type": "application/json" },
      body: JSON.stringify({
        eventId: target.eventId,
        instanceId: "inst-1",
        type: "ATTENDEE_INFO",
        info: {
          endpointGuid: `ks-${n}`,
          endpointType: "browser",
          infoType: "JOIN",
          joinTime: 1_700_000_000_000 + n,
          name: `Keyspace ${n}`,
        },
      }),
    });
    await res.body.dump();
    if (res.statusCode !== 204) throw new Error(`join answered ${res.statusCode}`);
    const until = Date.now() + 15_000;
    while (cardUnique(h, ts) < want && Date.now() < until) await sleep(10);
    out.push(cardUnique(h, ts) >= want ? performance.now() - t0 : Number.NaN);
    // Apart, so each one's latency includes the card's pacing as a lone join's would.
    await sleep(1_200);
  }
  return out.sort((a, b) => a - b);
}

export async function redisKeyspaceRows(rows: Row[]): Promise<void> {
  // DEBUG POPULATE writes the million keys inside Redis in a second or two.
  const redis = await startRedisServer(["--enable-debug-command", "local"]);
  const raw: Raw = createClient({ url: redis.url });
  let h: BenchApp | undefined;
  try {
    await raw.connect();
    h = await startBenchApp({ storeUrl: redis.url });
    const target = await subscribe(h, "Keyspace", CHANNELS.events);
    const until = Date.now() + 10_000;
    let ts: string | undefined;
    while (!ts && Date.now() < until) {
      ts = h.emulator.workspace
        .topLevel(CHANNELS.events)
        .find((m) => JSON.stringify(m.blocks ?? "").includes("Keyspace"))?.ts;
      if (!ts) await sleep(50);
    }
    if (!ts) throw new Error("the card was not posted");

    const emptyJoins = await joinsToCard(h, target, ts, 0);
    const emptyIdle = await idle(raw);
    await raw.sendCommand(["DEBUG", "POPULATE", String(UNRELATED), "unrelated"]);
    const keys = Number(await raw.dbSize());
    // Redis grows its hash table in the background after a million inserts; let that pass.
    await sleep(5_000);
    const fullJoins = await joinsToCard(h, target, ts, 1_000);
    const fullIdle = await idle(raw);

    const pct = (ms: number) => (100 * ms) / IDLE_MS;
    const describe = (r: typeof fullIdle) =>
      `${fmt(r.commands.ms, 1)} ms in ${r.commands.calls} commands; Redis ${fmt(r.total)} ms (${fmt(pct(r.total), 2)} % of a core)`;
    // Flat: within half again the empty figure, plus 20 ms (0.1 % of a core) for noise.
    const idleFlat = fullIdle.commands.ms <= emptyIdle.commands.ms * 1.5 + 20;
    rows.push({
      measure: `Redis with ${fmt(keys)} keys (${fmt(UNRELATED)} unrelated): one idle instance's cost to Redis over ${IDLE_MS / 1000} s`,
      figure: describe(fullIdle),
      baseline: `empty: ${describe(emptyIdle)}`,
      ratio: fmt(fullIdle.commands.ms / emptyIdle.commands.ms, 2),
      bar: "flat (≤ 1.5× empty + 20 ms)",
      met: idleFlat,
    });
    const median = (xs: number[]) => xs[Math.floor(xs.length / 2)] ?? Number.NaN;
    const joinsFlat =
      fullJoins.every(Number.isFinite) && median(fullJoins) <= median(emptyJoins) * 1.5 + 100;
    rows.push({
      measure: `Redis with ${fmt(UNRELATED)} unrelated keys: join → card (ms), median / max of ${JOINS}`,
      figure: `${fmt(median(fullJoins))} / ${fmt(fullJoins.at(-1) ?? Number.NaN)}`,
      baseline: `${fmt(median(emptyJoins))} / ${fmt(emptyJoins.at(-1) ?? Number.NaN)} empty`,
      ratio: fmt(median(fullJoins) / median(emptyJoins), 2),
      bar: "flat (≤ 1.5× empty + 100 ms)",
      met: joinsFlat,
    });
  } finally {
    await h?.close();
    raw.destroy();
    await redis.stop();
  }
}
