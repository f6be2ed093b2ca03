/**
 * Profiles the webhook route alone: `node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx
 * bench/profile-ingest.ts [accepted|auth|parse|bare|bare-deferred] [RATE]`. The app runs here
 * (profiled), the load in a child (bench/load.ts), so the profile holds the server side only.
 * With RATE, the load is an open loop at RATE msg/s instead of 32 in flight.
 * PROFILE_STORE_URL runs it on that store (a database of its own: nothing is emptied after).
 * WARM=N serves N messages before the measured window (default 3,000); V8 compiles on its
 * own threads for tens of thousands (see INGEST in rows/ingest.ts).
 * PROFILE_NO_WORKER=1 stops the live worker first (the outbox just fills): the route's cost
 * without the drain beside it. "bare" serves the same load from bare node:http in this process;
 * "bare-deferred" answers each request a turn later, in batches, as group commit does.
 *
 * Prints the event loop's delay (a long synchronous stretch shows there before the p99), the CPU
 * of each thread per message (main, the live worker, libuv's pool, V8's platform threads, by
 * /proc task id), and the measured window on the monotonic clock in µs: filter a
 * `--cpu-prof` profile's samples by it, or give it (in seconds) to `perf report --time` of a
 * `perf record -k CLOCK_MONOTONIC` run, which also sees kernel time and every thread.
 */
import { execFile } from "node:child_process";
import { once } from "node:events";
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { promisify } from "node:util";
import { CHANNELS, startBenchApp } from "./harness/app.ts";
import { subscribe } from "./harness/seed.ts";

const run = promisify(execFile);
const stage = process.argv[2] ?? "accepted";
const rate = Number(process.argv[3] ?? 0);
const h = await startBenchApp(
  process.env.PROFILE_STORE_URL ? { storeUrl: process.env.PROFILE_STORE_URL } : {},
);
// The same subscription as the ingest rows: the webhook target the events service was given.
const target = await subscribe(h, "Profiled", CHANNELS.events);
const event = { eventId: target.eventId };
const headers =
  stage === "auth" ? { ...target.headers, "x-onair-secret": "wrong" } : { ...target.headers };
// "bare": node:http parsing the same JSON in this process, the baseline (the app idles beside it).
// "bare-deferred": the same, answering each request after a turn of the loop, in batches (as
// group commit does), to tell the cost of answering later from the cost of the app's own work.
let batch: Array<() => void> = [];
const flushBatch = () => {
  const now = batch;
  batch = [];
  for (const f of now) f();
};
const bare = stage.startsWith("bare")
  ? createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        JSON.parse(Buffer.concat(chunks).toString());
        if (stage !== "bare-deferred") {
          res.writeHead(204).end();
          return;
        }
        if (batch.length === 0) setTimeout(flushBatch, 0.3);
        batch.push(() => res.writeHead(204).end());
      });
    }).listen(0, "127.0.0.1")
  : undefined;
if (bare) await once(bare, "listening");
const bareUrl = bare
  ? `http://127.0.0.1:${(bare.address() as AddressInfo).port}/webhooks/events/x`
  : "";
const plan = {
  kind: "webhook",
  url: bare ? bareUrl : target.url,
  headers,
  eventId: stage === "parse" ? "not-this-event" : event.eventId,
  ...(rate > 0 ? { rate, concurrency: 64, warmup: 1_000 } : { concurrency: 32 }),
  count: 20_000,
};
if (process.env.PROFILE_NO_WORKER === "1") await h.app.live.stop();
// Warm both sides (JIT, connections) outside the measured window.
await run(
  process.execPath,
  [
    "--import",
    "tsx",
    "bench/load.ts",
    JSON.stringify({
      ...plan,
      rate: undefined,
      concurrency: 32,
      count: Number(process.env.WARM ?? 3_000),
      offset: 1_000_000,
    }),
  ],
  { maxBuffer: 1 << 20 },
);
/** CPU µs of each of this process's threads by name (main, the live worker, libuv's pool, V8's). */
function threadCpu(): Map<string, number> {
  const out = new Map<string, number>();
  const tick = 1e6 / 100; // USER_HZ
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const us = (Number(f[11]) + Number(f[12])) * tick;
      const label = tid === String(process.pid) ? "main" : `${name}#${tid}`;
      out.set(label, (out.get(label) ?? 0) + us);
    } catch {
      // A thread that ended between the listing and the read.
    }
  }
  return out;
}
const threadsBefore = threadCpu();
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
const before = process.cpuUsage();
// The measured window on the profiles' clock (µs, monotonic), for filtering their samples.
const windowStart = process.hrtime.bigint() / 1000n;
const { stdout } = await run(
  process.execPath,
  ["--import", "tsx", "bench/load.ts", JSON.stringify(plan)],
  { maxBuffer: 1 << 20 },
);
const cpu = process.cpuUsage(before);
const windowEnd = process.hrtime.bigint() / 1000n;
const threads = [...threadCpu()]
  .map(([name, us]) => [name, (us - (threadsBefore.get(name) ?? 0)) / 20_000] as const)
  .filter(([, per]) => per > 0)
  .sort((a, b) => b[1] - a[1])
  .map(([name, per]) => `${name} ${per.toFixed(1)}`)
  .join(", ");
delay.disable();
const ms = (ns: number) => (ns / 1e6).toFixed(1);
process.stdout.write(
  `${stage}: ${stdout.trim()} cpu µs/msg ${(cpu.user + cpu.system) / 20_000}\n` +
    `event loop delay ms: p50 ${ms(delay.percentile(50))} p99 ${ms(delay.percentile(99))} max ${ms(delay.max)}\n` +
    `thread CPU µs/msg: ${threads}\n` +
    `profile window µs: ${windowStart} ${windowEnd}\n`,
);
bare?.close();
await h.close();
process.exit(0);
