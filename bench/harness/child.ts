import { startApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";

/**
 * The app in a process of its own (children.ts), so the burst rows read its RSS alone. Prints
 * `ONAIR_READY <origin>` once it serves. BENCH_LIVE_ENGINE=inline runs the engine on the app's
 * event loop, for comparison.
 */
const app = await startApp({
  config: loadConfig(process.env),
  retryPolicy: "fast",
  ...(process.env.BENCH_LIVE_ENGINE === "inline" ? { liveEngine: "inline" as const } : {}),
  host: "127.0.0.1",
});
process.stdout.write(`ONAIR_READY ${app.origin}\n`);
// A child outliving an aborted bench would keep its engine running: it goes with its parent.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.exit(1);
}, 1_000).unref();
process.on("SIGTERM", () => {
  void app.close().then(() => process.exit(0));
});
