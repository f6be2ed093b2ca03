/**
 * Profiles the webhook route alone: `node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx
 * bench/profile-ingest.ts [accepted|auth|parse]`. The app runs here (profiled), the load in a
 * child (bench/load.ts), so the profile holds the server side only.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { subscribeChannel } from "../src/live/lifecycle.ts";
import { CHANNELS, startHarness, TEAM, USERS } from "../test/helpers/app-harness.ts";
import { seedEvent } from "../test/helpers/live-fixtures.ts";

const run = promisify(execFile);
const stage = process.argv[2] ?? "accepted";
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
  concurrency: 32,
  count: 20_000,
};
const before = process.cpuUsage();
const { stdout } = await run(
  process.execPath,
  ["--import", "tsx", "bench/load.ts", JSON.stringify(plan)],
  { maxBuffer: 1 << 20 },
);
const cpu = process.cpuUsage(before);
process.stdout.write(`${stage}: ${stdout.trim()} cpu µs/msg ${(cpu.user + cpu.system) / 20_000}\n`);
await h.close();
process.exit(0);
