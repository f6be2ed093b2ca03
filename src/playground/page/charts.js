// Slack's native data blocks, drawn as its client draws them: `data_visualization` (a line, area
// or bar chart of series over categories, or a pie) as an inline SVG, `data_table` as a table
// paged by page_size, the header row first. Their fields are in
// slack-reference/blocks-and-objects.md.
import { h } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";
const COLOURS = ["#1264a3", "#2eb67d", "#ecb22e", "#e01e5a", "#36c5f0", "#4a154b"];

function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v !== undefined && v !== null) el.setAttribute(k, String(v));
  }
  for (const c of children.flat(Number.POSITIVE_INFINITY)) {
    if (c === undefined || c === null) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** A round step for the value axis: 1, 2 or 5 times a power of ten, about `ticks` of them. */
function niceStep(span, ticks = 4) {
  const raw = Math.max(span, 1) / ticks;
  const pow = 10 ** Math.floor(Math.log10(raw));
  const m = raw / pow;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * pow;
}

// Small enough that the thread pane (about 300 px) shows the labels at a readable size.
const W = 320;
const H = 190;
const PAD = { left: 36, right: 10, top: 10, bottom: 40 };

/** Series over categories: line, area or bar. */
function seriesChart(chart) {
  const categories = chart.axis_config?.categories ?? [];
  const series = chart.series ?? [];
  const values = series.flatMap((x) => (x.data ?? []).map((d) => Number(d.value) || 0));
  const lo = Math.min(0, ...values);
  const hiRaw = Math.max(0, ...values);
  const step = niceStep(hiRaw - lo);
  const hi = Math.max(step, Math.ceil(hiRaw / step) * step);
  const bottom = Math.floor(lo / step) * step;
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const n = Math.max(categories.length, 1);
  const bars = chart.type === "bar";
  const x = (i) => PAD.left + (bars || n === 1 ? ((i + 0.5) * plotW) / n : (i * plotW) / (n - 1));
  const y = (v) => PAD.top + plotH - ((v - bottom) / (hi - bottom || 1)) * plotH;
  const grid = [];
  for (let v = bottom; v <= hi + step / 2; v += step) {
    grid.push(
      s("line", { x1: PAD.left, x2: W - PAD.right, y1: y(v), y2: y(v), class: "grid" }),
      s("text", { x: PAD.left - 6, y: y(v) + 4, "text-anchor": "end", class: "tick" }, v),
    );
  }
  // Every category named while five fit; otherwise every k-th, so the labels never overlap.
  const every = Math.max(1, Math.ceil(n / 5));
  // A line's first and last points sit on the plot's edges: their labels lean inwards.
  const anchor = (i) =>
    bars || n === 1 ? "middle" : i === 0 ? "start" : i === n - 1 ? "end" : "middle";
  const labels = categories.map((c, i) =>
    i % every === 0
      ? s("text", { x: x(i), y: H - PAD.bottom + 16, "text-anchor": anchor(i), class: "tick" }, c)
      : null,
  );
  const marks = series.map((ser, k) => {
    const colour = COLOURS[k % COLOURS.length];
    const pts = (ser.data ?? [])
      .map((d) => ({ i: categories.indexOf(d.label), v: Number(d.value) || 0 }))
      .filter((p) => p.i >= 0)
      .sort((a, b) => a.i - b.i);
    if (bars) {
      const bw = (plotW / n / Math.max(series.length, 1)) * 0.8;
      return pts.map((p) =>
        s("rect", {
          x: x(p.i) - (bw * series.length) / 2 + k * bw,
          y: Math.min(y(p.v), y(0)),
          width: bw,
          height: Math.abs(y(0) - y(p.v)),
          fill: colour,
          "data-value": p.v,
        }),
      );
    }
    const line = pts.map((p) => `${x(p.i).toFixed(1)},${y(p.v).toFixed(1)}`).join(" ");
    const first = pts[0];
    const last = pts.at(-1);
    return [
      chart.type === "area" && first
        ? s("polygon", {
            points: `${x(first.i)},${y(0)} ${line} ${x(last.i)},${y(0)}`,
            fill: colour,
            "fill-opacity": 0.2,
          })
        : null,
      s("polyline", { points: line, fill: "none", stroke: colour, "stroke-width": 2 }),
      pts.map((p) =>
        s(
          "circle",
          { cx: x(p.i), cy: y(p.v), r: 3, fill: colour, "data-value": p.v },
          s("title", {}, `${categories[p.i]}: ${p.v}`),
        ),
      ),
    ];
  });
  const axis = chart.axis_config ?? {};
  return s(
    "svg",
    { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img", class: "bk-chart-svg" },
    grid,
    s("line", { x1: PAD.left, x2: W - PAD.right, y1: y(0), y2: y(0), class: "axis" }),
    labels,
    marks,
    axis.x_label
      ? s("text", { x: PAD.left + plotW / 2, y: H - 8, "text-anchor": "middle" }, axis.x_label)
      : null,
    axis.y_label
      ? s(
          "text",
          {
            x: 12,
            y: PAD.top + plotH / 2,
            "text-anchor": "middle",
            transform: `rotate(-90 12 ${PAD.top + plotH / 2})`,
          },
          axis.y_label,
        )
      : null,
  );
}

function pieChart(chart) {
  const segs = (chart.segments ?? []).filter((g) => Number(g.value) > 0);
  const total = segs.reduce((a, g) => a + Number(g.value), 0) || 1;
  let angle = -Math.PI / 2;
  const r = 80;
  const c = { x: 100, y: 100 };
  const arcs = segs.map((g, k) => {
    const a = (Number(g.value) / total) * Math.PI * 2;
    const p = (t) => `${(c.x + r * Math.cos(t)).toFixed(1)},${(c.y + r * Math.sin(t)).toFixed(1)}`;
    const d =
      segs.length === 1
        ? `M${c.x - r},${c.y}a${r},${r} 0 1,0 ${2 * r},0a${r},${r} 0 1,0 ${-2 * r},0`
        : `M${c.x},${c.y}L${p(angle)}A${r},${r} 0 ${a > Math.PI ? 1 : 0},1 ${p(angle + a)}Z`;
    angle += a;
    return s("path", { d, fill: COLOURS[k % COLOURS.length] }, s("title", {}, g.label));
  });
  const legend = segs.map((g, k) =>
    s(
      "text",
      { x: 200, y: 30 + k * 20 },
      s("tspan", { fill: COLOURS[k % COLOURS.length] }, "■ "),
      `${g.label}: ${g.value}`,
    ),
  );
  return s(
    "svg",
    { viewBox: "0 0 360 200", width: 360, height: 200, role: "img", class: "bk-chart-svg" },
    arcs,
    legend,
  );
}

export function renderDataVisualization(b) {
  const chart = b.chart ?? {};
  const series = chart.series ?? [];
  return h(
    "figure",
    { class: "bk-chart", "data-chart-type": chart.type },
    h("figcaption", { class: "bk-chart-title" }, b.title ?? ""),
    chart.type === "pie" ? pieChart(chart) : seriesChart(chart),
    series.length > 1
      ? h(
          "div",
          { class: "bk-chart-legend" },
          series.map((x, k) =>
            h("span", { style: `color:${COLOURS[k % COLOURS.length]}` }, `■ ${x.name}`),
          ),
        )
      : null,
  );
}

function cellText(c) {
  if (c?.type === "raw_number") return c.text ?? String(c.value);
  if (c?.type === "raw_text") return c.text ?? "";
  if (c?.type === "rich_text") {
    return (c.elements ?? [])
      .flatMap((p) => p.elements ?? [])
      .map((e) => e.text ?? e.url ?? "")
      .join("");
  }
  return "";
}

export function renderDataTable(b) {
  const [header = [], ...rows] = b.rows ?? [];
  const size = Math.max(1, Number(b.page_size) || 5);
  const pages = Math.max(1, Math.ceil(rows.length / size));
  const headerCol = Number(b.row_header_column_index ?? 0);
  const body = h("tbody");
  const status = h("span", { class: "muted" });
  const prev = h("button", { class: "bk-button small", type: "button" }, "‹");
  const next = h("button", { class: "bk-button small", type: "button" }, "›");
  let page = 0;
  const show = () => {
    body.replaceChildren(
      ...rows.slice(page * size, page * size + size).map((row) =>
        h(
          "tr",
          {},
          row.map((c, i) =>
            h(
              i === headerCol ? "th" : "td",
              { class: c?.type === "raw_number" ? "num" : null, scope: i === headerCol && "row" },
              cellText(c),
            ),
          ),
        ),
      ),
    );
    status.textContent = `${page * size + 1}–${Math.min(rows.length, (page + 1) * size)} of ${rows.length}`;
    prev.disabled = page === 0;
    next.disabled = page >= pages - 1;
  };
  prev.addEventListener("click", () => {
    page = Math.max(0, page - 1);
    show();
  });
  next.addEventListener("click", () => {
    page = Math.min(pages - 1, page + 1);
    show();
  });
  show();
  return h(
    "div",
    { class: "bk-table-wrap" },
    h(
      "table",
      { class: "bk-table" },
      h("caption", {}, b.caption ?? ""),
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          header.map((c) => h("th", { scope: "col" }, cellText(c))),
        ),
      ),
      body,
    ),
    pages > 1 ? h("div", { class: "bk-table-pager" }, prev, status, next) : null,
  );
}
