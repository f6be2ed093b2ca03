import type { InstanceSnapshot, MinuteSeries } from "./report.ts";

/**
 * The attendance chart: attendees present per minute, the state changes marked. Drawn by
 * Apache ECharts' server-side SVG renderer (no browser, no DOM) and rasterised to PNG by resvg.
 * Only counts and times go in: no name, no e-mail. Times are UTC (a picture has no reader's
 * zone; the message beside it gives the times in each reader's own). Both libraries are loaded
 * on the first chart, not at start: ECharts is large and most processes never draw one.
 */

export const CHART_SIZE = { width: 1000, height: 420 } as const;

const MARK_LABEL: Readonly<Record<string, string>> = {
  NOT_STARTED: "Not started",
  PREP_EVENT: "Prep",
  IN_EVENT: "Live",
  ENDED: "Ended",
};

function hhmm(ms: number): string {
  return new Date(ms).toISOString().slice(11, 16);
}

export async function chartSvg(snap: InstanceSnapshot, series: MinuteSeries): Promise<string> {
  const echarts = await import("echarts");
  const data: Array<[number, number]> = [];
  series.counts.forEach((c, i) => {
    data.push([series.start + i * series.step, c]);
  });
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
            ? "Attendees present per minute (UTC)"
            : `Attendees present per ${series.step / 60_000} minutes (UTC)`,
        left: "center",
        textStyle: { fontSize: 16, fontFamily: "DejaVu Sans, sans-serif" },
      },
      grid: { left: 60, right: 40, top: 60, bottom: 50 },
      xAxis: {
        type: "time",
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
            data: snap.marks.map(([state, at]) => ({
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
