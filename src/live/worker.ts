import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { FromWorker, WorkerInit } from "./worker-protocol.ts";

/**
 * tsx's ESM API (its `register`), found from this file rather than from the working directory
 * (npm start may run anywhere): the package's own export map names the ESM entry.
 */
function tsxEsmApi(): string {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve("tsx/package.json");
  const pkg = JSON.parse(readFileSync(manifest, "utf8")) as {
    exports: Record<string, { import: { default: string } }>;
  };
  const target = pkg.exports["./esm/api"]?.import.default;
  if (!target) throw new Error("tsx has no ESM API to load TypeScript in the live thread");
  return pathToFileURL(join(dirname(manifest), target)).href;
}

/**
 * The engine's thread allocates in bursts (an outbox batch decoded, sessions applied, a chunk
 * written) and keeps little. V8's default young generation lets a burst leave tens of MB of
 * garbage resident before a scavenge; 16 MB keeps the process's peak near what it holds. The
 * 50,000-attendee bench row: peak RSS 224-256 MB without it, 203-206 MB with it, final digest
 * and card no later (BENCH_COMPILED=1 BENCH_ONLY=bigEventRows npx tsx bench/run.ts).
 */
const LIMITS = { maxYoungGenerationSizeMb: 16 };

/**
 * Starts the engine's worker thread and resolves once it serves. From TypeScript sources (tsx,
 * vitest) the thread loads tsx first; from the compiled build it runs worker-main.js as is.
 */
export function spawnLiveWorker(
  init: WorkerInit,
  onMessage: (m: FromWorker) => void,
): Promise<Worker> {
  const source = import.meta.url.endsWith(".ts");
  const entry = new URL(source ? "./worker-main.ts" : "./worker-main.js", import.meta.url);
  const tsx = source ? tsxEsmApi() : undefined;
  const worker = tsx
    ? new Worker(
        `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); })`,
        { eval: true, workerData: init, resourceLimits: LIMITS },
      )
    : new Worker(entry, { workerData: init, resourceLimits: LIMITS });
  return new Promise((resolve, reject) => {
    const failed = (err: unknown) => reject(err);
    const exited = (code: number) => reject(new Error(`the live thread exited with ${code}`));
    worker.once("error", failed);
    worker.once("exit", exited);
    worker.on("message", (m: FromWorker) => {
      if (m.t === "ready") {
        worker.off("error", failed);
        worker.off("exit", exited);
        resolve(worker);
      }
      onMessage(m);
    });
  });
}
