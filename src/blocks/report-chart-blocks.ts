import {
  type InstanceSnapshot,
  type MinuteSeries,
  perMinute,
  type ReportFigures,
  reportFigures,
} from "../domain/report.ts";
import { isValidZone, offsetLabel } from "../domain/time.ts";
import { minutesText } from "./report.ts";

/**
 * The attendance report's native chart and table (README: "The attendance report"):
 * a `data_visualization` line of attendees present over the instance and a `data_table` of the
 * figures, beside the PNG and CSV files (which stay for export). Slack's limits
 * (slack-reference/blocks-and-objects.md): a series holds 1–20 points, every label and category
 * at most 20 characters and one of the axis's categories, the title at most 50, axis labels at
 * most 50; a table 1–100 data rows under a header, every row as long, cells of at least one
 * character. So the minutes are bucketed into at most 20 points, each the most attendees present
 * at once within it (a bucket's average would hide the peak the figures name).
 *
 * Counts and times only, as the PNG: no name, no e-mail. A block has no reader's zone for a
 * label, so times are in the event's own zone, named in the title (UTC when it has none).
 */

export const REPORT_CHART_BLOCK_ID = "onair_report_chart";
export const REPORT_FIGURES_BLOCK_ID = "onair_report_figures";

/** Slack's limits on the two blocks (blocks-and-objects.md). */
export const CHART_LIMITS = {
  points: 20,
  label: 20,
  title: 50,
  axisLabel: 50,
  seriesName: 20,
  tableRows: 100,
} as const;

export interface DataVisualizationBlock {
  type: "data_visualization";
  block_id: string;
  title: string;
  chart: {
    type: "line";
    series: Array<{ name: string; data: Array<{ label: string; value: number }> }>;
    axis_config: { categories: string[]; x_label: string; y_label: string };
  };
}

type Cell =
  | { type: "raw_text"; text: string }
  | { type: "raw_number"; value: number; text: string };

export interface DataTableBlock {
  type: "data_table";
  block_id: string;
  caption: string;
  rows: Cell[][];
  page_size: number;
  row_header_column_index: number;
}

export type ReportChartBlock = DataVisualizationBlock | DataTableBlock;

/** The report's data the blocks are built from (what src/live/report-upload.ts renders too). */
export interface ReportChartInput {
  figures: ReportFigures;
  series: MinuteSeries;
  /** The event's own zone (InstanceSnapshot.zone). */
  zone?: string | undefined;
}

/** The blocks' data from the report's snapshot, as the PNG and the figures are computed. */
export function chartInputOf(snap: InstanceSnapshot, now: number): ReportChartInput {
  return { figures: reportFigures(snap, now), series: perMinute(snap, now), zone: snap.zone };
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function zoneOf(zone: string | undefined): string {
  return zone && isValidZone(zone) ? zone : "UTC";
}

function formatter(zone: string, withDay: "none" | "weekday" | "date"): Intl.DateTimeFormat {
  return new Intl.DateTimeFormat("en-GB", {
    timeZone: zone,
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
    ...(withDay === "weekday" ? { weekday: "short" } : {}),
    ...(withDay === "date" ? { day: "numeric", month: "short" } : {}),
  });
}

/**
 * Labels for the bucket starts, unique (Slack takes a category once) and within 20 characters:
 * "14:05" while the instance stays within one day of its zone; with the weekday when it crosses
 * midnight ("Mon 23:30", "Tue 00:42"); with the date when even that repeats (over a week).
 */
export function bucketLabels(starts: readonly number[], zone: string): string[] {
  const day = new Intl.DateTimeFormat("en-GB", { timeZone: zone, dateStyle: "short" });
  const oneDay = new Set(starts.map((s) => day.format(new Date(s)))).size <= 1;
  for (const withDay of oneDay ? (["none"] as const) : (["weekday", "date"] as const)) {
    const f = formatter(zone, withDay);
    const labels = starts.map((s) => cut(f.format(new Date(s)), CHART_LIMITS.label));
    if (new Set(labels).size === labels.length) return labels;
  }
  // Only buckets of less than a minute could repeat a label; numbered all the same.
  return starts.map((_, i) => `#${i + 1}`);
}

/** At most `max` points: runs of whole minute buckets, each the most present within it. */
export function bucketSeries(
  series: MinuteSeries,
  max: number = CHART_LIMITS.points,
): Array<{ start: number; value: number }> {
  const n = series.counts.length;
  if (n === 0) return [{ start: series.start, value: 0 }];
  const per = Math.max(1, Math.ceil(n / max));
  const out: Array<{ start: number; value: number }> = [];
  for (let i = 0; i < n; i += per) {
    let most = 0;
    for (let k = i; k < Math.min(n, i + per); k++) most = Math.max(most, series.counts[k] ?? 0);
    out.push({ start: series.start + i * series.step, value: most });
  }
  return out;
}

export function reportChartBlock(input: ReportChartInput): DataVisualizationBlock {
  const zone = zoneOf(input.zone);
  const points = bucketSeries(input.series);
  const labels = bucketLabels(
    points.map((p) => p.start),
    zone,
  );
  const zoneName = zone === "UTC" ? "UTC" : `${zone}, ${offsetLabel(input.series.start, zone)}`;
  return {
    type: "data_visualization",
    block_id: REPORT_CHART_BLOCK_ID,
    title: cut(`Attendees present (${zoneName})`, CHART_LIMITS.title),
    chart: {
      type: "line",
      series: [
        {
          name: "Present",
          data: points.map((p, i) => ({ label: labels[i] ?? "", value: p.value })),
        },
      ],
      axis_config: {
        categories: labels,
        x_label: cut(`Time (${zoneName})`, CHART_LIMITS.axisLabel),
        y_label: "Attendees",
      },
    },
  };
}

function text(t: string): Cell {
  return { type: "raw_text", text: t || "–" };
}

function num(value: number, shown: string = String(value)): Cell {
  return { type: "raw_number", value, text: shown };
}

export function reportFiguresBlock(input: ReportChartInput): DataTableBlock {
  const f = input.figures;
  const zone = zoneOf(input.zone);
  const at = new Intl.DateTimeFormat("en-GB", {
    timeZone: zone,
    day: "numeric",
    month: "short",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
  });
  const when = (ms: number | undefined) =>
    text(ms === undefined ? "–" : `${at.format(new Date(ms))} (${zone})`);
  const round = (m: number) => Math.round(m * 10) / 10;
  return {
    type: "data_table",
    block_id: REPORT_FIGURES_BLOCK_ID,
    caption: f.ended ? "Attendance figures" : "Attendance figures so far",
    rows: [
      [text("Figure"), text("Value")],
      [text("Peak"), num(f.peak)],
      [text("Unique"), num(f.unique)],
      [text(f.ended ? "Present at the end" : "Here now"), num(f.presentAtEnd)],
      [text("Average minutes"), num(round(f.averageMinutes), minutesText(f.averageMinutes))],
      [text("Median minutes"), num(round(f.medianMinutes), minutesText(f.medianMinutes))],
      [text("First join"), when(f.firstJoin)],
      [text("Last join"), when(f.lastJoin)],
    ],
    page_size: 7,
    row_header_column_index: 0,
  };
}

/**
 * The extra blocks of the report's message: the chart and the table, to go after the figures'
 * text blocks. None when nobody joined (the text says so; an empty chart says nothing more).
 */
export function reportChartBlocks(input: ReportChartInput): ReportChartBlock[] {
  if (input.figures.unique === 0) return [];
  return [reportChartBlock(input), reportFiguresBlock(input)];
}

/**
 * Whether a refused report post is to be sent again without the chart and table: Slack answered
 * `invalid_blocks` (or `invalid_blocks_format`) and the post carried them. Once: the retry has
 * none, so it never asks again.
 */
export function postWithoutChart(error: string | undefined, hadChartBlocks: boolean): boolean {
  return hadChartBlocks && (error === "invalid_blocks" || error === "invalid_blocks_format");
}

/** The blocks to post without the chart and table (the rule above's second try). */
export function withoutChartBlocks<B extends { block_id?: string }>(blocks: readonly B[]): B[] {
  return blocks.filter(
    (b) => b.block_id !== REPORT_CHART_BLOCK_ID && b.block_id !== REPORT_FIGURES_BLOCK_ID,
  );
}

/**
 * Posts the report's blocks with the chart and table, and once more without them if Slack
 * refuses them (postWithoutChart); any other failure is the caller's. `post` is the one Slack
 * call that shares the report (files.completeUploadExternal with the same file ids: Slack
 * refuses invalid blocks before it completes the files).
 */
export async function postWithChartFallback<T>(
  post: (blocks: readonly unknown[]) => Promise<T>,
  textBlocks: readonly unknown[],
  chartBlocks: readonly ReportChartBlock[],
  errorName: (err: unknown) => string | undefined,
): Promise<T> {
  try {
    return await post([...textBlocks, ...chartBlocks]);
  } catch (err) {
    if (!postWithoutChart(errorName(err), chartBlocks.length > 0)) throw err;
    return post(textBlocks);
  }
}
