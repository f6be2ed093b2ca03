import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The house reads one way (README: Architecture). These rules fail the suite when an import
 * points the wrong way: the live engine never reaches into Slack listeners, only composition
 * roots know the sandbox and the playground, domain actions hold no Bolt types, and the
 * top-level parts of src/ never import each other in a circle, and the store's drivers are
 * reached only through keyv's adapters, wired in one place.
 */

const SRC = resolve(import.meta.dirname, "../../src");
/**
 * Files that build the app and may wire anything to anything: the composition root (app.ts, its
 * phases in app-phases.ts) and the process entry.
 */
const COMPOSITION_ROOTS = ["app.ts", "app-phases.ts", "main.ts"];
const MAX_LINES = 400;
/** The emulator's package and the bench: the issue's bar (600), looser than the app's own. */
const OTHER_MAX_LINES = 600;
/** The store's adapter wiring: the only files that may touch a store driver (README: store). */
const ADAPTER_WIRING = [
  "store/backends/sqlite.ts",
  "store/backends/redis.ts",
  "store/backends/postgres.ts",
];
const STORE_DRIVERS = ["sqlite3", "better-sqlite3", "@redis/client", "pg"];
const LONG_FILE_NOTE = "Why this file is long:";

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return filesUnder(path);
    return /\.(ts|js)$/.test(name) ? [path] : [];
  });
}

interface Import {
  from: string;
  /** Path relative to src/, or the package name. */
  to: string;
  external: boolean;
}

function importsOf(file: string): Import[] {
  const text = readFileSync(file, "utf8");
  const out: Import[] = [];
  const re =
    /(?:^|\n)\s*(?:import|export)[^"'`;]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;
  for (const m of text.matchAll(re)) {
    const spec = m[1] ?? m[2];
    if (!spec) continue;
    const from = relative(SRC, file);
    if (spec.startsWith("."))
      out.push({ from, to: relative(SRC, resolve(dirname(file), spec)), external: false });
    else out.push({ from, to: spec, external: true });
  }
  return out;
}

/** A file's top-level part: its folder under src/, or the file itself when it sits in src/. */
function partOf(path: string): string {
  const [first, ...rest] = path.split("/");
  return rest.length === 0 ? (first ?? path) : `${first}/`;
}

const files = filesUnder(SRC);
const imports = files.flatMap(importsOf);
const internal = imports.filter((i) => !i.external && !i.to.startsWith(".."));

describe("the shape of src/", () => {
  it("finds the imports it checks (the scan itself works)", () => {
    expect(files.length).toBeGreaterThan(50);
    expect(internal.some((i) => i.from === "app.ts" && i.to.startsWith("live/"))).toBe(true);
  });

  it("src/live never imports src/slack", () => {
    const bad = internal.filter((i) => i.from.startsWith("live/") && i.to.startsWith("slack/"));
    expect(bad).toEqual([]);
  });

  it("only composition roots import src/sandbox and src/playground", () => {
    const bad = internal.filter(
      (i) =>
        (i.to.startsWith("sandbox/") || i.to.startsWith("playground/")) &&
        !COMPOSITION_ROOTS.includes(i.from) &&
        partOf(i.from) !== partOf(i.to) &&
        !i.from.startsWith("playground/"),
    );
    expect(bad).toEqual([]);
  });

  it("domain actions hold no Bolt types and import no Slack listener", () => {
    const bad = imports.filter(
      (i) =>
        i.from.startsWith("domain/") &&
        (i.to === "@slack/bolt" || i.to.startsWith("slack/") || i.to.startsWith("http/")),
    );
    expect(bad).toEqual([]);
  });

  it("only app.ts imports its phases (a composition root's imports are not walked for circles)", () => {
    const importers = internal.filter((i) => i.to === "app-phases.ts").map((i) => i.from);
    expect(importers).toEqual(["app.ts"]);
  });

  it("the top-level parts of src/ import each other in no circle", () => {
    const edges = new Map<string, Set<string>>();
    for (const i of internal) {
      const a = partOf(i.from);
      const b = partOf(i.to);
      if (a === b || COMPOSITION_ROOTS.includes(a)) continue;
      const set = edges.get(a) ?? new Set<string>();
      edges.set(a, set);
      set.add(b);
    }
    const cycles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const walk = (node: string, path: string[]) => {
      if (state.get(node) === "done") return;
      if (state.get(node) === "open") {
        cycles.push([...path.slice(path.indexOf(node)), node].join(" → "));
        return;
      }
      state.set(node, "open");
      for (const next of edges.get(node) ?? []) walk(next, [...path, node]);
      state.set(node, "done");
    };
    for (const node of edges.keys()) walk(node, []);
    expect(cycles).toEqual([]);
  });

  it("files inside one folder import each other in no circle (src/ and packages/)", () => {
    expect(folderCircles()).toEqual([]);
  });

  it("only the store's adapter wiring imports a store driver or a keyv adapter", () => {
    const driver = (to: string) =>
      STORE_DRIVERS.some((d) => to === d || to.startsWith(`${d}/`)) || to.startsWith("@keyv/");
    const bad = imports.filter(
      (i) => i.external && driver(i.to) && !ADAPTER_WIRING.includes(i.from),
    );
    expect(bad).toEqual([]);
    // Each backend is built on its official keyv adapter.
    const wired = imports.filter(
      (i) => ADAPTER_WIRING.includes(i.from) && i.to.startsWith("@keyv/"),
    );
    expect(wired.map((i) => `${i.from} ${i.to}`).sort()).toEqual([
      "store/backends/postgres.ts @keyv/postgres",
      "store/backends/redis.ts @keyv/redis",
      "store/backends/sqlite.ts @keyv/sqlite",
    ]);
  });

  it(`no file is over ${MAX_LINES} lines without saying why at its top`, () => {
    const long = files.filter((f) => {
      const text = readFileSync(f, "utf8");
      const lines = text.split("\n").length;
      if (lines <= MAX_LINES) return false;
      return !text.split("\n").slice(0, 20).join("\n").includes(LONG_FILE_NOTE);
    });
    expect(long.map((f) => relative(SRC, f))).toEqual([]);
  });

  it(`no file of a package (its tests too) or of bench/ is over ${OTHER_MAX_LINES} lines without saying why`, () => {
    const pkgs = join(ROOT, "packages");
    const others = [
      ...readdirSync(pkgs)
        .flatMap((p) => ["src", "test"].map((d) => join(pkgs, p, d)))
        .filter((d) => statSync(d, { throwIfNoEntry: false })?.isDirectory())
        .flatMap(filesUnder)
        .map((f) => relative(ROOT, f)),
      ...filesUnder(join(ROOT, "bench")).map((f) => relative(ROOT, f)),
    ];
    expect(others.length).toBeGreaterThan(20);
    const long = others.filter((f) => {
      const text = readFileSync(join(ROOT, f), "utf8");
      if (text.split("\n").length <= OTHER_MAX_LINES) return false;
      return !text.split("\n").slice(0, 20).join("\n").includes(LONG_FILE_NOTE);
    });
    expect(long).toEqual([]);
  });
});

const ROOT = resolve(SRC, "..");

/** Every source file under src/ and each package's src/, relative to the repository. */
function sourceFiles(): string[] {
  const pkgs = join(ROOT, "packages");
  const roots = [SRC, ...readdirSync(pkgs).map((p) => join(pkgs, p, "src"))];
  return roots
    .filter((r) => statSync(r, { throwIfNoEntry: false })?.isDirectory())
    .flatMap(filesUnder)
    .map((f) => relative(ROOT, f));
}

/**
 * The circles among files of one folder (strongly connected parts of their import graph, type
 * imports included), each as its files sorted and joined by " ⇄ ".
 */
function folderCircles(): string[] {
  const all = sourceFiles();
  const known = new Set(all);
  const edges = new Map<string, string[]>();
  for (const file of all) {
    const text = readFileSync(join(ROOT, file), "utf8");
    const re =
      /(?:^|\n)\s*(?:import|export)[^"'`;]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;
    const out: string[] = [];
    for (const m of text.matchAll(re)) {
      const spec = m[1] ?? m[2];
      if (!spec?.startsWith(".")) continue;
      let to = relative(ROOT, resolve(ROOT, dirname(file), spec));
      if (!known.has(to) && known.has(to.replace(/\.js$/, ".ts"))) to = to.replace(/\.js$/, ".ts");
      if (known.has(to) && dirname(to) === dirname(file)) out.push(to);
    }
    edges.set(file, out);
  }
  // Tarjan's strongly connected components.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[] = [];
  let n = 0;
  const visit = (v: string) => {
    index.set(v, n);
    low.set(v, n);
    n++;
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
    }
    if (low.get(v) !== index.get(v)) return;
    const part: string[] = [];
    for (let w = stack.pop(); w !== undefined; w = stack.pop()) {
      onStack.delete(w);
      part.push(w);
      if (w === v) break;
    }
    if (part.length > 1 || (edges.get(v) ?? []).includes(v)) circles.push(part.sort().join(" ⇄ "));
  };
  for (const v of all) if (!index.has(v)) visit(v);
  return circles.sort();
}
