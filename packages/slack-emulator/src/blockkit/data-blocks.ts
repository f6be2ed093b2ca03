import type { Checker } from "./checker.ts";
import { isObj, type Obj } from "./limits.ts";

/**
 * The data blocks (docs.slack.dev: data_visualization, changelog 2026-06-16; data_table,
 * changelog 2026-05-20; limits as slack-reference/blocks-and-objects.md gathers them from the
 * pages and node-slack-sdk's types). Where the sources say nothing (which surfaces take them,
 * how many a message may hold) nothing is enforced here beyond the message surface.
 */

export const DATA_LIMITS = {
  chartTitle: 50,
  chartLabel: 20,
  axisLabel: 50,
  seriesName: 20,
  series: 6,
  points: 20,
  pieSegments: 6,
  tableRows: 101,
  tableColumns: 20,
  tableChars: 10_000,
  pageSize: 100,
} as const;

const CHARTS = new Set(["pie", "bar", "area", "line"]);

function label(c: Checker, pointer: string, v: unknown): void {
  c.str(pointer, v, DATA_LIMITS.chartLabel, true);
}

export function checkDataVisualization(c: Checker, pointer: string, b: Obj): void {
  c.str(`${pointer}/title`, b.title, DATA_LIMITS.chartTitle, true);
  const chart = b.chart;
  const cp = `${pointer}/chart`;
  if (chart === undefined) {
    c.err(cp, "missing required field");
    return;
  }
  if (!isObj(chart)) {
    c.err(cp, "expected an object");
    return;
  }
  if (typeof chart.type !== "string" || !CHARTS.has(chart.type)) {
    c.err(`${cp}/type`, "must be one of pie, bar, area, line");
    return;
  }
  if (chart.type === "pie") {
    const segments = c.array(`${cp}/segments`, chart.segments, 1, DATA_LIMITS.pieSegments);
    segments?.forEach((s, i) => {
      const sp = `${cp}/segments/${i}`;
      if (!isObj(s)) {
        c.err(sp, "expected an object");
        return;
      }
      label(c, `${sp}/label`, s.label);
      if (typeof s.value !== "number" || !(s.value > 0)) c.err(`${sp}/value`, "must be above 0");
    });
    return;
  }
  const axis = chart.axis_config;
  const ap = `${cp}/axis_config`;
  let categories: Set<unknown> | undefined;
  if (axis === undefined) c.err(ap, "missing required field");
  else if (!isObj(axis)) c.err(ap, "expected an object");
  else {
    const cats = c.array(`${ap}/categories`, axis.categories, 1, Number.POSITIVE_INFINITY);
    for (const [i, cat] of (cats ?? []).entries()) label(c, `${ap}/categories/${i}`, cat);
    categories = new Set(cats ?? []);
    c.str(`${ap}/x_label`, axis.x_label, DATA_LIMITS.axisLabel);
    c.str(`${ap}/y_label`, axis.y_label, DATA_LIMITS.axisLabel);
  }
  if (chart.series === undefined) {
    c.err(`${cp}/series`, "missing required field");
    return;
  }
  const series = c.array(`${cp}/series`, chart.series, 1, DATA_LIMITS.series);
  const names = new Set<string>();
  series?.forEach((s, i) => {
    const sp = `${cp}/series/${i}`;
    if (!isObj(s)) {
      c.err(sp, "expected an object");
      return;
    }
    c.str(`${sp}/name`, s.name, DATA_LIMITS.seriesName, true);
    if (typeof s.name === "string") {
      if (names.has(s.name)) c.err(`${sp}/name`, `series name ${s.name} is already used`);
      names.add(s.name);
    }
    const data = c.array(`${sp}/data`, s.data, 1, DATA_LIMITS.points);
    data?.forEach((d, k) => {
      const dp = `${sp}/data/${k}`;
      if (!isObj(d)) {
        c.err(dp, "expected an object");
        return;
      }
      label(c, `${dp}/label`, d.label);
      if (categories && typeof d.label === "string" && !categories.has(d.label)) {
        c.err(`${dp}/label`, "must be one of axis_config.categories");
      }
      if (typeof d.value !== "number" || !Number.isFinite(d.value)) {
        c.err(`${dp}/value`, "must be a number");
      }
    });
  });
}

/** Characters of a cell as Slack counts them toward the table's cap: its text leaves. */
function cellChars(v: unknown): number {
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + cellChars(x), 0);
  if (!isObj(v)) return 0;
  let n = 0;
  for (const [k, x] of Object.entries(v)) {
    if (k === "text" && typeof x === "string") n += x.length;
    else if (typeof x === "object") n += cellChars(x);
  }
  return n;
}

function checkCell(c: Checker, pointer: string, cell: unknown, header: boolean): void {
  if (!isObj(cell)) {
    c.err(pointer, "expected an object");
    return;
  }
  switch (cell.type) {
    case "raw_text":
      c.str(`${pointer}/text`, cell.text, Number.POSITIVE_INFINITY, true);
      break;
    case "raw_number":
      if (typeof cell.value !== "number" || !Number.isFinite(cell.value)) {
        c.err(`${pointer}/value`, "must be a number");
      }
      c.str(`${pointer}/text`, cell.text, Number.POSITIVE_INFINITY, true);
      break;
    case "rich_text":
      if (header) c.err(`${pointer}/type`, "rich_text is not allowed in the header row");
      c.array(`${pointer}/elements`, cell.elements, 0, Number.POSITIVE_INFINITY);
      break;
    default:
      c.err(`${pointer}/type`, "must be one of raw_text, raw_number, rich_text");
  }
}

export function checkDataTable(c: Checker, pointer: string, b: Obj): void {
  c.str(`${pointer}/caption`, b.caption, Number.POSITIVE_INFINITY, true);
  if (b.page_size !== undefined) {
    const p = b.page_size;
    if (!Number.isInteger(p) || (p as number) < 1 || (p as number) > DATA_LIMITS.pageSize) {
      c.err(`${pointer}/page_size`, `must be between 1 and ${DATA_LIMITS.pageSize}`);
    }
  }
  if (b.row_header_column_index !== undefined) {
    const i = b.row_header_column_index;
    if (!Number.isInteger(i) || (i as number) < 0) {
      c.err(`${pointer}/row_header_column_index`, "must be a whole number from 0");
    }
  }
  if (b.rows === undefined) {
    c.err(`${pointer}/rows`, "missing required field");
    return;
  }
  const rows = c.array(`${pointer}/rows`, b.rows, 2, DATA_LIMITS.tableRows);
  if (!rows) return;
  let width: number | undefined;
  let chars = 0;
  rows.forEach((row, r) => {
    const rp = `${pointer}/rows/${r}`;
    const cells = c.array(rp, row, 1, DATA_LIMITS.tableColumns);
    if (!cells) return;
    if (width === undefined) width = cells.length;
    else if (cells.length !== width) c.err(rp, `every row must have ${width} cells`);
    cells.forEach((cell, k) => {
      checkCell(c, `${rp}/${k}`, cell, r === 0);
      chars += cellChars(cell);
    });
  });
  if (chars > DATA_LIMITS.tableChars) {
    c.err(
      `${pointer}/rows`,
      `all cells together must be less than ${DATA_LIMITS.tableChars + 1} characters`,
    );
  }
}
