import type { InstanceSnapshot, MinuteSeries } from "./report.ts";
import { isValidZone, offsetLabel } from "./time.ts";

/**
 * The attendance chart: attendees present per minute, the state changes marked. Drawn by
 * Apache ECharts' server-side SVG renderer (no browser, no DOM) and rasterised to PNG by resvg.
 * Only counts and times go in: no name, no e-mail. A picture has no reader's zone: its times are
 * in the event's own zone (the organizer's choice), named in the title, or UTC when the snapshot
 * carries none (the message beside it gives the times in each reader's own). The end of an ended
 * instance is always marked, inside the drawn range. Both libraries are loaded
 * on the first chart, not at start: ECharts is large and most processes never draw one.
 */

export const CHART_SIZE = { width: 1000, height: 420 } as const;

const MARK_LABEL: Readonly<Record<string, string>> = {
  NOT_STARTED: "Not started",
  PREP_EVENT: "Prep",
  IN_EVENT: "Live",
  ENDED: "Ended",
};

/** "14:05" in `zone`. */
function clock(zone: string): (ms: number) => string {
  const f = new Intl.DateTimeFormat("en-GB", {
    timeZone: zone,
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
  });
  return (ms) => f.format(new Date(ms));
}

/** The zone the chart is drawn in and the words naming it (the zone's name and its offset). */
function chartZone(snap: InstanceSnapshot, at: number): { zone: string; label: string } {
  const zone = snap.zone && isValidZone(snap.zone) ? snap.zone : "UTC";
  return { zone, label: zone === "UTC" ? "UTC" : `${zone}, ${offsetLabel(at, zone)}` };
}

export async function chartSvg(snap: InstanceSnapshot, series: MinuteSeries): Promise<string> {
  const echarts = await import("echarts");
  const data: Array<[number, number]> = [];
  series.counts.forEach((c, i) => {
    data.push([series.start + i * series.step, c]);
  });
  const marks: Array<readonly [string, number]> = [...snap.marks];
  // Ended by the quiet rule before the engine wrote its mark: the end is marked all the same.
  if (snap.endedAt !== undefined && !marks.some(([state]) => state === "ENDED")) {
    marks.push(["ENDED", snap.endedAt]);
  }
  // The axis spans the data and every mark: a mark outside the range would not be drawn.
  const times = [series.start, series.start + series.counts.length * series.step];
  for (const [, at] of marks) times.push(at);
  const min = Math.min(...times);
  const max = Math.max(...times);
  const { zone, label } = chartZone(snap, min);
  const hhmm = clock(zone);
  const chart = echarts.init(null, null, {
    renderer: "svg",
    ssr: true,
    width: CHART_SIZE.width,
    height: CHART_SIZE.height,
  });
  try {
    chart.setOption({
      animation: false,
      backgroundColor: "#ffffff",
      title: {
        text:
          series.step === 60_000
            ? `Attendees present per minute (${label})`
            : `Attendees present per ${series.step / 60_000} minutes (${label})`,
        left: "center",
        textStyle: { fontSize: 16, fontFamily: "DejaVu Sans, sans-serif" },
      },
      grid: { left: 60, right: 40, top: 60, bottom: 50 },
      xAxis: {
        type: "time",
        min,
        max,
        axisLabel: { formatter: (v: number) => hhmm(v), fontFamily: "DejaVu Sans, sans-serif" },
      },
      yAxis: { type: "value", minInterval: 1, name: "attendees" },
      series: [
        {
          type: "line",
          step: "end",
          symbol: "none",
          areaStyle: { opacity: 0.25 },
          lineStyle: { width: 2 },
          data,
          markLine: {
            symbol: "none",
            lineStyle: { type: "dashed", color: "#b22222" },
            label: { formatter: "{b}", fontFamily: "DejaVu Sans, sans-serif" },
            data: marks.map(([state, at]) => ({
              name: MARK_LABEL[state] ?? "State",
              xAxis: at,
            })),
          },
        },
      ],
    });
    return chart.renderToSVGString();
  } finally {
    chart.dispose();
  }
}

export async function chartPng(snap: InstanceSnapshot, series: MinuteSeries): Promise<Buffer> {
  const svg = await chartSvg(snap, series);
  const { Resvg } = await import("@resvg/resvg-js");
  const image = new Resvg(svg, {
    background: "#ffffff",
    fitTo: { mode: "original" },
    font: { loadSystemFonts: true, defaultFontFamily: "DejaVu Sans" },
  }).render();
  return image.asPng();
}
