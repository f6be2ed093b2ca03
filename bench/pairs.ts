/**
 * Floor-then-app pairs of the ingest closed loop, to compare two builds or settings on a shared
 * machine where one run swings by a tenth: `tsx bench/pairs.ts [STORE_URL] [PAIRS]` (default a
 * SQLite file of its own, 4 pairs of PAIRS_COUNT or 10,000 messages) prints each pair's
 * app/floor ratio, their mean, and how long after each app run's last ack the engine had applied
 * everything (the next floor run waits for that). PAIRS_ENGINE=stopped stops the live engine
 * first (the outbox just fills): what the engine draining beside the route costs;
 * PAIRS_ENGINE=inline runs it on the route's thread.
 * PAIRS_RATE=5000 runs each pair as the open loop instead (that many msg/s offered, 64
 * connections, 1,000 of warm-up, as the bench's p99 rows) and compares p99 acks: app/floor.
 * Run it before and after a change, alternating. A STORE_URL given here is written without a
 * namespace and not emptied after: give it a database of its own.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CHANNELS, caughtUp, startBenchApp } from "./harness/app.ts";
import { load } from "./harness/measure.ts";
import { subscribe } from "./harness/seed.ts";
import { floorIngest } from "./rows/floor.ts";

const dir = mkdtempSync(join(tmpdir(), "onair-pairs-"));
const storeUrl = process.argv[2] || `sqlite://${join(dir, "pairs.sqlite")}`;
const pairs = Number(process.argv[3] || 4);
const COUNT = Number(process.env.PAIRS_COUNT || 10_000);
const h = await startBenchApp({
  storeUrl,
  ...(process.env.PAIRS_ENGINE === "inline" ? { liveEngine: "inline" as const } : {}),
});
try {
  const target = await subscribe(h, "Pairs", CHANNELS.events);
  if (process.env.PAIRS_ENGINE === "stopped") await h.app.live.stop();
  const plan = {
    kind: "webhook",
    url: target.url,
    headers: target.headers,
    eventId: target.eventId,
    concurrency: 32,
  };
  // As the bench's rows: past V8's compiling on its own threads (INGEST in rows/ingest.ts).
  await load({ ...plan, count: 20_000, offset: 1_000_000 });
  if (process.env.PAIRS_ENGINE !== "stopped") await caughtUp(h);
  const rate = Number(process.env.PAIRS_RATE || 0);
  const open = rate > 0 ? { rate, concurrency: 64, warmup: 1_000 } : {};
  const ratios: number[] = [];
  const p99s: string[] = [];
  const lags: number[] = [];
  for (let r = 0; r < pairs; r++) {
    const floor = await floorIngest(storeUrl, COUNT, 32, open);
    const app = await load({ ...plan, ...open, count: COUNT, offset: 2_000_000 + r * 100_000 });
    if (app.failed > 0) throw new Error(`${app.failed} messages failed`);
    ratios.push(rate > 0 ? app.p99 / floor.p99 : app.perSec / floor.perSec);
    p99s.push(
      `${app.p99.toFixed(1)}/${floor.p99.toFixed(1)} (p50 ${app.p50.toFixed(1)}/${floor.p50.toFixed(1)})`,
    );
    if (process.env.PAIRS_ENGINE !== "stopped") lags.push(await caughtUp(h));
  }
  const mean = ratios.reduce((a, b) => a + b, 0) / ratios.length;
  const median = [...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)] ?? Number.NaN;
  process.stdout.write(
    `app/floor ${rate > 0 ? `p99 at ${rate} msg/s` : "msg/s"}, ${pairs} pairs: ${ratios.map((x) => x.toFixed(2)).join(" / ")}; mean ${mean.toFixed(3)}; median ${median.toFixed(2)}${rate > 0 ? ` (p99 ms, app/floor: ${p99s.join(", ")})` : ""}; engine caught up ${lags.map((x) => x.toFixed(0)).join(" / ")} ms after the last ack\n`,
  );
} finally {
  await h.close();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
