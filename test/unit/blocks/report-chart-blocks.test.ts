import { validateBlocks } from "@onair/slack-emulator";
import { describe, expect, it } from "vitest";
import {
  bucketSeries,
  CHART_LIMITS,
  chartInputOf,
  type DataTableBlock,
  type DataVisualizationBlock,
  postWithChartFallback,
  postWithoutChart,
  REPORT_CHART_BLOCK_ID,
  REPORT_FIGURES_BLOCK_ID,
  reportChartBlocks,
  withoutChartBlocks,
} from "../../../src/blocks/report-chart-blocks.ts";
import type { InstanceSnapshot } from "../../../src/domain/report.ts";

const MIN = 60_000;
const T0 = Date.UTC(2026, 10, 23, 15, 0);

/** An instance of `minutes`, attendees joining one a minute and staying to the end; `peakAt` holds a burst. */
function instance(minutes: number, zone = "Europe/Berlin"): InstanceSnapshot {
  const end = T0 + minutes * MIN;
  const attendees = Array.from({ length: Math.min(minutes, 300) }, (_, i) => ({
    name: `A${i}`,
    endpointType: "browser",
    sessions: [T0 + i * MIN, end],
  }));
  // A burst of 40 that stays 2 minutes in the middle: the chart must show it.
  const mid = T0 + Math.floor(minutes / 2) * MIN;
  for (let k = 0; k < 40; k++) {
    attendees.push({
      name: `B${k}`,
      endpointType: "pstn",
      sessions: [mid, mid + Math.min(2, minutes) * MIN],
    });
  }
  return {
    instanceId: "i1",
    state: "IN_EVENT",
    marks: [["IN_EVENT", T0]],
    endedAt: end,
    attendees,
    zone,
  };
}

function check(minutes: number) {
  const snap = instance(minutes);
  const input = chartInputOf(snap, snap.endedAt as number);
  const blocks = reportChartBlocks(input);
  const r = validateBlocks(blocks);
  expect(r.messages).toEqual([]);
  const chart = blocks.find((b) => b.block_id === REPORT_CHART_BLOCK_ID) as DataVisualizationBlock;
  const table = blocks.find((b) => b.block_id === REPORT_FIGURES_BLOCK_ID) as DataTableBlock;
  const data = chart.chart.series[0]?.data ?? [];
  expect(data.length).toBeGreaterThan(0);
  expect(data.length).toBeLessThanOrEqual(CHART_LIMITS.points);
  for (const p of data) expect(p.label.length).toBeLessThanOrEqual(CHART_LIMITS.label);
  expect(new Set(chart.chart.axis_config.categories).size).toBe(data.length);
  // Bucketed to the most present at once within each: the peak is on the chart.
  expect(Math.max(...data.map((p) => p.value))).toBe(input.figures.peak);
  expect(chart.title.length).toBeLessThanOrEqual(CHART_LIMITS.title);
  expect(chart.title).toContain("Europe/Berlin");
  const peakRow = table.rows.find((row) => row[0]?.type === "raw_text" && row[0].text === "Peak");
  expect(peakRow?.[1]).toMatchObject({ type: "raw_number", value: input.figures.peak });
  return { chart, data, input };
}

describe("the report's native chart and table", () => {
  it("a 1-minute instance: one or two points, within Slack's limits", () => {
    const { data } = check(1);
    expect(data.length).toBeLessThanOrEqual(2);
    expect(data[0]?.label).toBe("16:00");
  });

  it("a 3-hour instance: 20 points at most, labels the clock in the event's zone", () => {
    const { data } = check(180);
    expect(data.length).toBeLessThanOrEqual(20);
    expect(data.length).toBeGreaterThanOrEqual(18);
    expect(data[0]?.label).toBe("16:00");
    for (const p of data) expect(p.label).toMatch(/^\d{2}:\d{2}$/);
  });

  it("a 24-hour instance: 20 points, the clock repeating, so the weekday is in the label", () => {
    const { data } = check(24 * 60);
    expect(data.length).toBeLessThanOrEqual(20);
    expect(data[0]?.label).toMatch(/^Mon 16:00$/);
    expect(data.at(-1)?.label).toMatch(/^Tue /);
  });

  it("buckets a series longer than 20 into runs, the most present in each", () => {
    const counts = Int32Array.from({ length: 45 }, (_, i) => (i === 44 ? 99 : i));
    const points = bucketSeries({ start: T0, step: MIN, counts });
    expect(points.length).toBeLessThanOrEqual(20);
    expect(points.at(-1)?.value).toBe(99);
    expect(points[1]?.start).toBe(T0 + 3 * MIN);
  });

  it("nothing when nobody joined", () => {
    const snap = { ...instance(10), attendees: [] };
    expect(reportChartBlocks(chartInputOf(snap, T0 + 10 * MIN))).toEqual([]);
  });

  it("a refusal with invalid_blocks posts again once without them; other errors do not", () => {
    expect(postWithoutChart("invalid_blocks", true)).toBe(true);
    expect(postWithoutChart("invalid_blocks", false)).toBe(false);
    expect(postWithoutChart("channel_not_found", true)).toBe(false);
    const snap = instance(30);
    const blocks = [
      { type: "section", block_id: "figures" },
      ...reportChartBlocks(chartInputOf(snap, snap.endedAt as number)),
    ];
    expect(withoutChartBlocks(blocks).map((b) => b.block_id)).toEqual(["figures"]);
  });
});

describe("posting the report with its chart", () => {
  const snap = instance(30);
  const chart = reportChartBlocks(chartInputOf(snap, snap.endedAt as number));
  const text = [{ type: "section", block_id: "figures" }];
  const name = (err: unknown) => (err as { code?: string }).code;

  it("posts once with the chart and table when Slack takes them", async () => {
    const posts: unknown[][] = [];
    await postWithChartFallback(async (b) => posts.push([...b]), text, chart, name);
    expect(posts.map((b) => b.length)).toEqual([3]);
  });

  it("on invalid_blocks posts once more without them; another error is not retried", async () => {
    const posts: unknown[][] = [];
    const refuse = async (b: readonly unknown[]) => {
      posts.push([...b]);
      if (b.length > 1) throw Object.assign(new Error("refused"), { code: "invalid_blocks" });
    };
    await postWithChartFallback(refuse, text, chart, name);
    expect(posts.map((b) => b.length)).toEqual([3, 1]);
    const other = async () => {
      throw Object.assign(new Error("x"), { code: "not_in_channel" });
    };
    await expect(postWithChartFallback(other, text, chart, name)).rejects.toThrow("x");
  });
});
