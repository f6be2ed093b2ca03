/**
 * Profiles the webhook route alone: `node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx
 * bench/profile-ingest.ts [accepted|auth|parse] [RATE]`. The app runs here (profiled), the load
 * in a child (bench/load.ts), so the profile holds the server side only. With RATE, the load is
 * an open loop at RATE msg/s instead of 32 in flight. PROFILE_NO_WORKER=1 stops the live worker
 * first (the outbox just fills): the route's cost without the drain beside it. Prints the
 * event loop's delay too: a long synchronous stretch shows there before it shows in the p99.
 */
import { execFile } from "node:child_process";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { promisify } from "node:util";
import { subscribeChannel } from "../src/domain/subscriptions.ts";
import { CHANNELS, startHarness, TEAM, USERS } from "../test/helpers/app-harness.ts";
import { seedEvent } from "../test/helpers/live-fixtures.ts";

const run = promisify(execFile);
const stage = process.argv[2] ?? "accepted";
const rate = Number(process.argv[3] ?? 0);
const h = await startHarness({ env: { LOG_LEVEL: "warn" } });
const deps = h.app.deps;
const event = await seedEvent(deps, { team: TEAM, organizer: USERS.omar, title: "Profiled" });
const events = deps.events as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
const original = events.registerWebhook as (...a: unknown[]) => Promise<unknown>;
let target = { url: "", headers: {} as Record<string, string> };
events.registerWebhook = (...args: unknown[]) => {
  target = args[3] as typeof target;
  return original.apply(events, args);
};
await subscribeChannel(deps, {
  team: TEAM,
  eventId: event.eventId,
  channel: CHANNELS.events,
  user: USERS.omar,
});
events.registerWebhook = original;
const headers =
  stage === "auth" ? { ...target.headers, "x-onair-secret": "wrong" } : { ...target.headers };
const plan = {
  kind: "webhook",
  url: target.url,
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
    JSON.stringify({ ...plan, rate: undefined, concurrency: 32, count: 3_000, offset: 1_000_000 }),
  ],
  { maxBuffer: 1 << 20 },
);
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
const before = process.cpuUsage();
const { stdout } = await run(
  process.execPath,
  ["--import", "tsx", "bench/load.ts", JSON.stringify(plan)],
  { maxBuffer: 1 << 20 },
);
const cpu = process.cpuUsage(before);
delay.disable();
const ms = (ns: number) => (ns / 1e6).toFixed(1);
process.stdout.write(
  `${stage}: ${stdout.trim()} cpu µs/msg ${(cpu.user + cpu.system) / 20_000}\n` +
    `event loop delay ms: p50 ${ms(delay.percentile(50))} p99 ${ms(delay.percentile(99))} max ${ms(delay.max)}\n`,
);
await h.close();
process.exit(0);
