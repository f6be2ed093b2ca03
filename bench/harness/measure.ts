/**
 * What every row measures with: the load generator in its own process (bench/load.ts), bare
 * node:http as the same run's baseline, percentiles, CPU clocks, and BENCH_SHORT.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);

/** BENCH_SHORT=1: a tenth of the messages, to check that the rows run (figures too noisy to read). */
export const SHORT = process.env.BENCH_SHORT === "1";

export interface LoadResult {
  sent: number;
  ok: number;
  /** Acknowledged warm-up requests of an open loop (not in the figures). */
  warmupOk?: number;
  failed: number;
  statuses: Record<string, number>;
  elapsedMs: number;
  perSec: number;
  p50: number;
  p99: number;
  max: number;
}

const LOAD = fileURLToPath(new URL("../load.ts", import.meta.url));

/** Runs one load plan (bench/load.ts) in a process of its own and returns its figures. */
export async function load(plan: Record<string, unknown>): Promise<LoadResult> {
  const { stdout } = await run(process.execPath, ["--import", "tsx", LOAD, JSON.stringify(plan)], {
    maxBuffer: 1 << 20,
    timeout: 120_000,
  });
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as LoadResult;
}

export async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Bare node:http parsing the same JSON: the baseline for webhook ingest. */
export async function bareIngest(
  count: number,
  concurrency: number,
  extra: Record<string, unknown> = {},
): Promise<LoadResult> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      JSON.parse(Buffer.concat(chunks).toString());
      res.writeHead(204).end();
    });
  });
  const url = await listen(server);
  try {
    return await load({
      kind: "webhook",
      url: `${url}/webhooks/events/x`,
      count,
      concurrency,
      ...extra,
    });
  } finally {
    server.close();
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

export function cpuMicros(u: NodeJS.CpuUsage): number {
  return u.user + u.system;
}

/**
 * CPU time of this process's main thread (the one that answers requests), in µs, from Linux's
 * per-thread accounting (`/proc/self/task/<pid>/stat`, clock ticks of 10 ms): what the thread
 * itself ran, unlike its event loop's busy time, which also counts the time the thread was
 * runnable but waiting for a core. Undefined where there is no /proc.
 */
export function mainThreadCpuMicros(): number | undefined {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
    // Fields after the command (which may hold spaces) start after the last ')'.
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime and stime are fields 14 and 15 of the line: 12th and 13th after the command.
    return ((Number(f[11]) + Number(f[12])) * 1e6) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}
/** Linux's USER_HZ: 100 on every architecture Node runs on. */
const CLOCK_TICKS = 100;

/** Sliding 1 s windows over call times: the most calls in any one second. */
export function maxPerSecond(times: number[]): number {
  const t = [...times].sort((a, b) => a - b);
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < t.length; hi++) {
    while ((t[hi] ?? 0) - (t[lo] ?? 0) >= 1_000) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}

/** A process's resident set, from /proc (Linux); 0 when it cannot be read. */
export function processRss(pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return Number(kb ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/** A port nothing listens on now (a server of the bench's own takes it next). */
