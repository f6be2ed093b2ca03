import { describe, expect, it } from "vitest";
import { validateBlocks, validateView } from "../src/index.ts";

// The data_visualization and data_table blocks held to Slack's limits
// (slack-reference/blocks-and-objects.md): each at the limit passes, one past it fails, naming
// the field.

const cats = (n: number) => Array.from({ length: n }, (_, i) => `c${i}`);
const line = (o: { points?: number; series?: number; title?: string; label?: string } = {}) => {
  const categories = cats(o.points ?? 3);
  if (o.label !== undefined) categories[0] = o.label;
  return {
    type: "data_visualization",
    block_id: "chart",
    title: o.title ?? "Attendees",
    chart: {
      type: "line",
      series: Array.from({ length: o.series ?? 1 }, (_, s) => ({
        name: `s${s}`,
        data: categories.map((label, i) => ({ label, value: i })),
      })),
      axis_config: { categories, x_label: "Time", y_label: "People" },
    },
  };
};
const cell = (text: string) => ({ type: "raw_text", text });
const table = (rows: number, cols = 2, extra: Record<string, unknown> = {}) => ({
  type: "data_table",
  caption: "Figures",
  rows: Array.from({ length: rows }, (_, r) =>
    Array.from({ length: cols }, (_, c) =>
      r > 0 && c === 1
        ? { type: "raw_number", value: r, text: String(r) }
        : cell(r === 0 ? `h${c}` : "x"),
    ),
  ),
  ...extra,
});
const fails = (blocks: unknown[], pointer: string) => {
  const r = validateBlocks(blocks);
  expect(r.ok).toBe(false);
  expect(r.messages.join("\n")).toContain(`[json-pointer:${pointer}]`);
};

describe("data_visualization", () => {
  it("takes a line chart at Slack's limits: 20 points, 6 series, 20-character labels, a 50-character title", () => {
    const r = validateBlocks([
      line({ points: 20, series: 6, title: "t".repeat(50), label: "l".repeat(20) }),
    ]);
    expect(r.messages).toEqual([]);
  });

  it("refuses one past each limit", () => {
    fails([line({ points: 21 })], "/blocks/0/chart/series/0/data");
    fails([line({ series: 7 })], "/blocks/0/chart/series");
    fails([line({ title: "t".repeat(51) })], "/blocks/0/title");
    fails([line({ label: "l".repeat(21) })], "/blocks/0/chart/axis_config/categories/0");
  });

  it("refuses a point whose label is no category, a repeated series name, a missing axis", () => {
    const b = line();
    b.chart.series[0]?.data.push({ label: "elsewhere", value: 1 });
    fails([b], "/blocks/0/chart/series/0/data/3/label");
    const twice = line({ series: 2 });
    (twice.chart.series[1] as { name: string }).name = "s0";
    fails([twice], "/blocks/0/chart/series/1/name");
    const { axis_config: _, ...noAxis } = line().chart;
    fails([{ ...line(), chart: noAxis }], "/blocks/0/chart/axis_config");
    fails([{ ...line(), chart: { type: "radar" } }], "/blocks/0/chart/type");
    fails([{ type: "data_visualization", chart: line().chart }], "/blocks/0/title");
  });

  it("takes a pie of 1–6 segments with values above 0", () => {
    const pie = (n: number, value = 1) => ({
      type: "data_visualization",
      title: "Share",
      chart: {
        type: "pie",
        segments: Array.from({ length: n }, (_, i) => ({ label: `p${i}`, value })),
      },
    });
    expect(validateBlocks([pie(6)]).ok).toBe(true);
    fails([pie(7)], "/blocks/0/chart/segments");
    fails([pie(1, 0)], "/blocks/0/chart/segments/0/value");
  });

  it("is a message block: not in a modal", () => {
    const r = validateView({
      type: "modal",
      title: { type: "plain_text", text: "x" },
      blocks: [line()],
    });
    expect(r.ok).toBe(false);
  });
});

describe("data_table", () => {
  it("takes a header and 100 rows of 20 columns", () => {
    expect(validateBlocks([table(101, 20, { page_size: 100 })]).messages).toEqual([]);
  });

  it("refuses 101 data rows, 21 columns, ragged rows, no caption, a bad page size", () => {
    fails([table(102)], "/blocks/0/rows");
    fails([table(1)], "/blocks/0/rows");
    fails([table(3, 21)], "/blocks/0/rows/0");
    const ragged = table(3);
    ragged.rows[2]?.push(cell("x"));
    fails([ragged], "/blocks/0/rows/2");
    const { caption: _, ...noCaption } = table(3);
    fails([noCaption], "/blocks/0/caption");
    fails([table(3, 2, { page_size: 101 })], "/blocks/0/page_size");
  });

  it("refuses an empty cell, a number cell without a number, rich text in the header", () => {
    const empty = table(3);
    (empty.rows[1] as unknown[])[0] = cell("");
    fails([empty], "/blocks/0/rows/1/0/text");
    const nan = table(3);
    (nan.rows[1] as unknown[])[1] = { type: "raw_number", value: "7", text: "7" };
    fails([nan], "/blocks/0/rows/1/1/value");
    const rich = table(3);
    (rich.rows[0] as unknown[])[0] = { type: "rich_text", elements: [] };
    fails([rich], "/blocks/0/rows/0/0/type");
  });

  it("refuses more than 10,000 characters across its cells", () => {
    const at = table(3, 2);
    const big = (n: number) => ({
      ...at,
      rows: [
        [cell("a".repeat(n)), cell("b")],
        [cell("c"), cell("d")],
      ],
    });
    expect(validateBlocks([big(10_000 - 3)]).ok).toBe(true);
    fails([big(10_000 - 2)], "/blocks/0/rows");
  });
});
