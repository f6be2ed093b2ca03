import type { InstanceSnapshot } from "../../src/domain/report.ts";
import { reportCsv } from "../../src/domain/report.ts";
import { renderReport } from "../../src/live/report-upload.ts";
import type { Row } from "../harness/table.ts";

/**
 * The attendance report of a 50,000-attendee instance (3 hours, a fifth of them leaving and
 * coming back): the figures, the chart (ECharts SSR → resvg PNG) and the CSV, as posted when the
 * instance ends. Time and the process's RSS growth while it runs, beside the same data's CSV
 * alone and JSON.stringify of the snapshot, measured in the same run. The first chart loads the
 * libraries: it is drawn once before the timed run, and that cold cost is a row of its own.
 */

const ATTENDEES = 50_000;
const MIN = 60_000;
const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a");

function snapshot(): InstanceSnapshot {
  const start = Date.UTC(2026, 10, 23, 15, 0);
  let seed = 7;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const attendees = Array.from({ length: ATTENDEES }, (_, i) => {
    const join = start + Math.floor(rand() * 60) * MIN + Math.floor(rand() * MIN);
    const leave = join + Math.floor(rand() * 120 * MIN);
    const sessions =
      i % 5 === 0
        ? [join, leave, leave + 5 * MIN, i % 10 === 0 ? 0 : leave + 30 * MIN]
        : [join, leave];
    return {
      name: `Attendee ${i}`,
      email: `attendee-${i}@example.com`,
      endpointType: i % 7 === 0 ? "pstn" : "browser",
      sessions,
    };
  });
  return {
    instanceId: "bench",
    state: "IN_EVENT",
    marks: [
      ["PREP_EVENT", start - 10 * MIN],
      ["IN_EVENT", start],
      ["ENDED", start + 180 * MIN],
    ],
    endedAt: start + 180 * MIN,
    attendees,
  };
}

async function measure<T>(
  fn: () => Promise<T> | T,
): Promise<{ ms: number; rssMb: number; out: T }> {
  const before = process.memoryUsage().rss;
  let peak = before;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 5);
  const t0 = performance.now();
  const out = await fn();
  const ms = performance.now() - t0;
  clearInterval(timer);
  peak = Math.max(peak, process.memoryUsage().rss);
  return { ms, rssMb: (peak - before) / 2 ** 20, out };
}

export async function reportRows(rows: Row[]): Promise<void> {
  const snap = snapshot();
  const now = snap.endedAt ?? Date.now();
  const cold = await measure(() =>
    renderReport({ ...snap, attendees: snap.attendees.slice(0, 10) }, now, true),
  );
  const json = await measure(() => JSON.stringify(snap));
  const csv = await measure(() => reportCsv(snap, now, true));
  const full = await measure(() => renderReport(snap, now, true));
  rows.push({
    measure: `attendance report, ${ATTENDEES.toLocaleString("en")} attendees (figures + PNG + CSV)`,
    figure: `${fmt(full.ms)} ms, RSS +${fmt(full.rssMb)} MB (PNG ${fmt(full.out.png.length / 1024)} KiB, CSV ${fmt(full.out.csv.length / 2 ** 20, 1)} MiB)`,
    baseline: `CSV alone ${fmt(csv.ms)} ms +${fmt(csv.rssMb)} MB; JSON.stringify ${fmt(json.ms)} ms +${fmt(json.rssMb)} MB`,
    ratio: fmt(full.ms / Math.max(1, csv.ms), 1),
    bar: "< 5 s, < 500 MB",
    met: full.ms < 5_000 && full.rssMb < 500,
  });
  rows.push({
    measure: "attendance report, first chart of a process (loads ECharts and resvg)",
    figure: `${fmt(cold.ms)} ms`,
    baseline: "",
    ratio: "",
    bar: "",
    met: undefined,
  });
}
