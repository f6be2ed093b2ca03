import { randomBytes } from "node:crypto";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Lane, type LanePort } from "../../../src/live/lane.ts";
import { NO_ANSWER_BACKOFF } from "../../../src/live/outcome.ts";
import { ChannelPacer } from "../../../src/live/pacer.ts";
import { createCipher, openStore, type Store } from "../../../src/store/index.ts";

/**
 * A lane of a run that replaced another while the old run's call to the channel was under way
 * (under-way.ts): it calls the channel only once that call has settled, and not before the pause
 * the old lane took after it. The port is the run's side of the lane, its calls scripted; the
 * pacer is the real one on a real (memory) store.
 */

let store: Store;
beforeAll(async () => {
  store = await openStore("memory://lane-after", {
    cipher: createCipher(randomBytes(32)),
    sweepIntervalMs: 0,
  });
});
afterAll(async () => {
  await store?.close();
});

/** A run whose one card is due until posted; `post` does what the test says. */
function port(post: (at: number) => Promise<void>, pacer: ChannelPacer) {
  const state = { posted: false, stopped: false, calls: [] as number[] };
  const p: LanePort = {
    team: "T1",
    stopped: () => state.stopped,
    mayCall: () => true,
    plan: () => (state.posted ? undefined : { kind: "card" }),
    post: async () => {
      const at = Date.now();
      state.calls.push(at);
      await post(at);
      state.posted = true;
    },
    refused: async () => {},
    pacer,
    logger: pino({ level: "silent" }),
    metrics: { slackCalls: { inc: () => {} } as never },
  };
  return { port: p, state };
}

/** Resolves once the old lane's call has gone out (however loaded the machine). */
async function started(state: { calls: number[] }): Promise<void> {
  while (state.calls.length === 0) await new Promise((r) => setTimeout(r, 5));
}

describe("a lane told to wait for a call of the run it replaced", () => {
  it("calls only once that call has settled, and not before the pause a lost answer left", async () => {
    const pacer = new ChannelPacer(store, { paceMs: 1 });
    let answered = 0;
    // The old run's post: its answer lost after 300 ms (a dropped connection, not a refusal).
    const old = port(async () => {
      await new Promise((r) => setTimeout(r, 300));
      answered = Date.now();
      old.state.stopped = true; // the run was dropped meanwhile: its lane ends after the pause is set
      throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    }, pacer);
    const oldLane = new Lane(old.port, "C1");
    oldLane.wake();
    await started(old.state);
    const fresh = port(async () => {}, pacer);
    const lane = new Lane(fresh.port, "C1", oldLane.settled());
    lane.wake();
    expect(lane.running).toBe(true);
    await lane.done;
    expect(fresh.state.calls).toHaveLength(1);
    // After the old call's (lost) answer, and after the pause the old lane would have taken.
    expect(fresh.state.calls[0]).toBeGreaterThanOrEqual(answered + NO_ANSWER_BACKOFF.firstMs - 20);
  });

  it("calls as soon as the old call has settled when it was answered", async () => {
    const pacer = new ChannelPacer(store, { paceMs: 1 });
    let answered = 0;
    const old = port(async () => {
      await new Promise((r) => setTimeout(r, 300));
      answered = Date.now();
    }, pacer);
    const oldLane = new Lane(old.port, "C2");
    oldLane.wake();
    await started(old.state);
    const fresh = port(async () => {}, pacer);
    const lane = new Lane(fresh.port, "C2", oldLane.settled());
    lane.wake();
    await lane.done;
    expect(fresh.state.calls[0]).toBeGreaterThanOrEqual(answered);
    // No pause was left: nothing held it back past the answer but the pacer's turn.
    expect(fresh.state.calls[0]).toBeLessThan(answered + NO_ANSWER_BACKOFF.firstMs);
  });
});
