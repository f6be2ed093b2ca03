/**
 * `npm run bench`: runs every group of rows (groups.ts), each measure beside a baseline taken in
 * the same run, and prints one table. Load comes from a separate process (load.ts) on loopback;
 * what rows measure with is in harness/, the rows themselves in rows/.
 * BENCH_ONLY=attendeeBurstRows,ingestSqlite runs a subset (the names in groups.ts).
 */
import { cpus, loadavg } from "node:os";
import { GROUPS } from "./groups.ts";
import { fmt, printTable, type Row } from "./harness/table.ts";

// The app, the sandbox and the emulator share this process: its RSS bounds the app's from above.
let peakRss = 0;
const rssTimer = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 50);
rssTimer.unref();

const loads = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");

const started = new Date();
process.stdout.write(
  `On Air benchmarks — ${started.toISOString()} — node ${process.version}, ${cpus().length} cores, load average at start ${loads()}\n`,
);
const only = process.env.BENCH_ONLY?.split(",");
const unknown = only?.filter((name) => !GROUPS.some((g) => g.name === name)) ?? [];
if (unknown.length > 0) {
  process.stderr.write(
    `BENCH_ONLY names no group: ${unknown.join(", ")} (the names are in bench/groups.ts)\n`,
  );
  process.exit(2);
}
const rows: Row[] = [];
for (const group of GROUPS.filter((g) => !only || only.includes(g.name))) {
  try {
    await group.run(rows);
  } catch (err) {
    rows.push({
      measure: group.name,
      figure: `failed: ${(err as Error).message}`,
      baseline: "",
      ratio: "",
      bar: "",
      met: false,
    });
  }
}
printTable(rows);
process.stdout.write(
  `load average at end ${loads()}; peak RSS of the bench process (emulator, sandbox, and the apps run in process) ${fmt(peakRss / 2 ** 20)} MB\n`,
);
clearInterval(rssTimer);
// Keep-alive sockets of the app's clients may hold the loop open: the table is printed.
process.exit(0);
