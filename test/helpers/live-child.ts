import { startApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";

/**
 * The app in a child process, configured by its environment, for tests that kill it (SIGKILL)
 * or run two of it on one store. Prints `ONAIR_READY <origin>` once it serves.
 */
const app = await startApp({
  config: loadConfig(process.env),
  retryPolicy: "fast",
  // Benchmarks compare the engine in its own thread with the engine inline.
  ...(process.env.ONAIR_TEST_LIVE_ENGINE === "inline" ? { liveEngine: "inline" as const } : {}),
  host: "127.0.0.1",
});
process.stdout.write(`ONAIR_READY ${app.origin}\n`);
// A child outliving an aborted test run would keep its live engine on the shared Redis test
// databases and take the next run's leases: once the process that spawned it is gone (this
// child is re-parented), it goes too.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.exit(1);
}, 1_000).unref();
process.on("SIGTERM", () => {
  void app.close().then(() => process.exit(0));
});
