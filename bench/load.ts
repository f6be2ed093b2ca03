/**
 * The load generator, run as a separate process so the server under test does not share its
 * event loop: `tsx bench/load.ts '<json plan>'`. Prints one JSON line with the results.
 * Bounded in count and time; loopback only.
 */
import { createHmac } from "node:crypto";
import { Agent, request } from "undici";

interface Plan {
  url: string;
  /** "webhook": JSON attendee messages; "slash": signed slash commands. */
  kind: "webhook" | "slash";
  count: number;
  /** Closed loop with this many in flight, or open loop at `rate` per second. */
  concurrency?: number;
  rate?: number;
  headers?: Record<string, string>;
  eventId?: string;
  signingSecret?: string;
  maxMs?: number;
  /** First message number (endpointGuid suffix), so a warm-up and a run never share a guid. */
  offset?: number;
  /**
   * Requests sent first and not measured (open loop only): they open every connection and warm
   * both sides' code, which otherwise shows as a few hundred ms at the start of the p99. Their
   * message numbers follow the measured ones.
   */
  warmup?: number;
  /** Slash command text; default "help". */
  text?: string;
}

const plan = JSON.parse(process.argv[2] ?? "{}") as Plan;
const allowed = new URL(plan.url);
if (!["127.0.0.1", "localhost", "[::1]"].includes(allowed.hostname)) {
  throw new Error("load: loopback targets only");
}
const dispatcher = new Agent({ connections: Math.max(plan.concurrency ?? 1, 8), pipelining: 1 });

function body(n: number): { text: string; headers: Record<string, string> } {
  const i = n + (plan.offset ?? 0);
  if (plan.kind === "webhook") {
    const text = JSON.stringify({
      eventId: plan.eventId ?? "ev-bench",
      instanceId: "inst-1",
      type: "ATTENDEE_INFO",
      info: {
        endpointGuid: `guid-${i}`,
        endpointType: "browser",
        infoType: "JOIN",
        joinTime: 1_700_000_000_000 + i,
        name: `Attendee ${i}`,
        email: `attendee-${i}@example.com`,
      },
    });
    return { text, headers: { "content-type": "application/json", ...plan.headers } };
  }
  const form = new URLSearchParams({
    token: "unused",
    team_id: "T0ONAIR",
    team_domain: "onair",
    channel_id: "C0GENERAL",
    channel_name: "general",
    user_id: "U0MIA0MEMBER",
    user_name: "mia",
    command: "/onair",
    text: plan.text ?? "help",
    api_app_id: "A0ONAIR",
    response_url: `${new URL(plan.url).origin}/noop`,
    trigger_id: `t${i}`,
  }).toString();
  const ts = Math.floor(Date.now() / 1000);
  const sig = `v0=${createHmac("sha256", plan.signingSecret ?? "")
    .update(`v0:${ts}:${form}`)
    .digest("hex")}`;
  return {
    text: form,
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      "x-slack-request-timestamp": String(ts),
      "x-slack-signature": sig,
    },
  };
}

const latencies: number[] = [];
let ok = 0;
let failed = 0;
const statuses: Record<string, number> = {};
const deadline = Date.now() + (plan.maxMs ?? 60_000);

async function one(i: number): Promise<void> {
  const { text, headers } = body(i);
  const t0 = performance.now();
  try {
    const res = await request(plan.url, { method: "POST", body: text, headers, dispatcher });
    await res.body.dump();
    latencies.push(performance.now() - t0);
    statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
    if (res.statusCode < 300) ok++;
    else failed++;
  } catch {
    failed++;
  }
}

let warmupOk = 0;
if (plan.rate && plan.warmup) {
  let next = 0;
  const end = plan.warmup;
  await Promise.all(
    Array.from({ length: plan.concurrency ?? 1 }, async () => {
      while (next < end) await one(plan.count + next++);
    }),
  );
  warmupOk = ok;
  ok = 0;
  failed = 0;
  latencies.length = 0;
  for (const k of Object.keys(statuses)) delete statuses[k];
}

const started = performance.now();
if (plan.rate) {
  const interval = 1000 / plan.rate;
  const pending: Promise<void>[] = [];
  for (let i = 0; i < plan.count && Date.now() < deadline; i++) {
    const due = started + i * interval;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    pending.push(one(i));
  }
  await Promise.all(pending);
} else {
  let next = 0;
  const workers = Array.from({ length: plan.concurrency ?? 1 }, async () => {
    while (next < plan.count && Date.now() < deadline) await one(next++);
  });
  await Promise.all(workers);
}
const elapsed = performance.now() - started;
latencies.sort((a, b) => a - b);
const pct = (p: number) =>
  latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? Number.NaN;
process.stdout.write(
  `${JSON.stringify({ sent: ok + failed, ok, warmupOk, failed, statuses, elapsedMs: elapsed, perSec: ((ok + failed) / elapsed) * 1000, p50: pct(50), p99: pct(99), max: latencies.at(-1) ?? Number.NaN })}\n`,
);
await dispatcher.close();
