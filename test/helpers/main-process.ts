import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach } from "vitest";

/**
 * `npm start`'s entry (src/main.ts) in a child process, as a user runs it: an empty environment
 * but PATH and what the test gives, in a directory of the test's own. Children and directories
 * are cleaned up after each test.
 */

const ROOT = resolve(import.meta.dirname, "../..");
// tsx's loader in this process's node, as `npm start` runs it, without the CLI's extra process.
const TSX_LOADER = pathToFileURL(join(ROOT, "node_modules/tsx/dist/esm/index.mjs")).href;
const MAIN = join(ROOT, "src/main.ts");

const children: ChildProcess[] = [];
const dirs: string[] = [];

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

export function runMain(env: Record<string, string>, cwd: string) {
  const child = spawn(process.execPath, ["--import", TSX_LOADER, MAIN], {
    cwd,
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => {
    out += String(d);
  });
  child.stderr.on("data", (d) => {
    err += String(d);
  });
  // The exit code, or the signal's name when a signal ended the process (a crash says which).
  const exited = new Promise<number | string | null>((done) =>
    child.on("exit", (code, signal) => done(code ?? signal)),
  );
  return {
    child,
    exited,
    out: () => out,
    err: () => err,
    async waitFor(re: RegExp, ms = 30_000): Promise<RegExpExecArray> {
      const until = Date.now() + ms;
      for (;;) {
        const m = re.exec(out);
        if (m) return m;
        if (child.exitCode !== null || Date.now() > until) {
          throw new Error(`no ${re} in stdout; stdout: ${out}\nstderr: ${err}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

export function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "onair-main-"));
  dirs.push(d);
  return d;
}
