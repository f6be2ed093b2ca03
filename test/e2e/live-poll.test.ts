import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { refreshMessage } from "../../src/domain/subscription.ts";
import { type Harness, startHarness, TEAM } from "../helpers/app-harness.ts";
import { eventually } from "../helpers/live-fixtures.ts";

/**
 * The outbox is read on a nudge (this process stored something) and by polling (another
 * instance stored it, or a restart left it). An idle worker polls less and less often, up to
 * maxPollMs, and still picks up what another process stored.
 */

let h: Harness;
let reads = 0;
beforeAll(async () => {
  // Inline: the test counts the engine's outbox reads on this thread's store.
  h = await startHarness({ liveEngine: "inline" });
  const outbox = h.app.deps.store.outbox;
  // Every turn starts with one read of the events that have work (outbox.work).
  const work = outbox.work.bind(outbox);
  outbox.work = () => {
    reads++;
    return work();
  };
});
afterAll(async () => {
  await h?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the live worker's outbox polling", () => {
  it("backs off while the outbox stays empty", async () => {
    await sleep(500);
    const before = reads;
    await sleep(3_000);
    // At a fixed 200 ms it would read 15 times; doubling from 200 ms to 2 s reads about 4.
    expect(reads - before).toBeLessThanOrEqual(7);
    expect(reads - before).toBeGreaterThanOrEqual(1);
  });

  it("still finds, within the longest wait, what another process stored without a nudge", async () => {
    const deps = h.app.deps;
    const id = await deps.store.outbox.put({
      team: TEAM,
      subscriptionId: "sub-of-another-process",
      eventId: "evt-elsewhere",
      receivedAt: Date.now(),
      message: refreshMessage(),
    });
    await eventually(
      async () => ((await deps.store.outbox.get(id)) === undefined ? true : undefined),
      "the item taken from the outbox",
      5_000,
    );
  });

  it("reads at once again when nudged", async () => {
    const before = reads;
    h.app.live.nudge();
    await eventually(() => (reads > before ? true : undefined), "a read after the nudge", 1_000);
  });
});
