import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { NudgeGate } from "../../../src/live/nudge-gate.ts";

describe("the nudge gate between the webhook route and the live engine", () => {
  it("lets the first store nudge a new engine, and no other until a read begins", () => {
    const gate = new NudgeGate();
    expect(gate.stored()).toBe(true);
    expect([gate.stored(), gate.stored(), gate.stored()]).toEqual([false, false, false]);
  });

  it("lets exactly one store nudge after each read begins", () => {
    const gate = new NudgeGate();
    gate.stored();
    const nudges: boolean[][] = [];
    for (let read = 0; read < 3; read++) {
      gate.reading();
      nudges.push([gate.stored(), gate.stored()]);
    }
    expect(nudges).toEqual([
      [true, false],
      [true, false],
      [true, false],
    ]);
    // Reads that begin with nothing stored between them still want one nudge, not several.
    gate.reading();
    gate.reading();
    expect([gate.stored(), gate.stored()]).toEqual([true, false]);
  });

  it("is one flag for both threads: a read begun on the engine's thread lets the route nudge", async () => {
    const gate = new NudgeGate();
    expect(gate.stored()).toBe(true);
    expect(gate.stored()).toBe(false);
    // The engine's side in another thread, on the same shared memory.
    const worker = new Worker(
      `const { workerData, parentPort } = require("node:worker_threads");
       Atomics.store(new Int32Array(workerData), 0, 1);
       parentPort.postMessage("read begun");`,
      { eval: true, workerData: gate.buffer },
    );
    await new Promise((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
    });
    await worker.terminate();
    expect(gate.stored()).toBe(true);
    expect(gate.stored()).toBe(false);
  });
});
