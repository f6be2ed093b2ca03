/** One line of the bench's table: a measure beside its baseline from the same run, and its bar. */
export interface Row {
  measure: string;
  figure: string;
  baseline: string;
  ratio: string;
  bar: string;
  met: boolean | undefined;
}

/**
 * A group of rows sharing one setup (an app, a store, a burst). `name` is what BENCH_ONLY
 * selects; `run` appends its rows, and a throw becomes one failed row.
 */
export interface RowGroup {
  readonly name: string;
  run(rows: Row[]): Promise<void>;
}

export const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a");

/**
 * A ratio judged against `bar`, to two places, or as many more (up to six) as it takes not to
 * print the bar itself for a ratio that is not it (2.004 against ≤ 2 read "2.00 … NO").
 */
export function fmtAgainst(n: number, bar: number): string {
  let digits = 2;
  while (digits < 6 && n !== bar && fmt(n, digits) === fmt(bar, digits)) digits++;
  return fmt(n, digits);
}

export function printTable(rows: readonly Row[]): void {
  const head = ["measure", "figure", "baseline (same run)", "ratio", "bar", "met"];
  const body = rows.map((r) => [
    r.measure,
    r.figure,
    r.baseline,
    r.ratio,
    r.bar,
    r.met === undefined ? "-" : r.met ? "yes" : "NO",
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  const out = [
    line(head),
    `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`,
    ...body.map(line),
  ];
  process.stdout.write(`\n${out.join("\n")}\n`);
}
