import { describe, expect, it } from "vitest";
import { createReadiness, STARTING, STOPPING } from "../../../src/http/readiness.ts";

describe("readiness: work in flight", () => {
  it("counts entered work until each leaves, beside tracked promises", async () => {
    const gate = createReadiness();
    expect(gate.refusal()).toBe(STARTING);
    gate.open();
    expect(gate.refusal()).toBeUndefined();
    gate.enter();
    gate.enter();
    let finish = () => {};
    gate.track(new Promise<void>((r) => (finish = r)));
    gate.leave();
    expect(await gate.drained(20)).toBe(false);
    gate.leave();
    expect(await gate.drained(20)).toBe(false);
    const drained = gate.drained(5_000);
    finish();
    expect(await drained).toBe(true);
    gate.close();
    expect(gate.refusal()).toBe(STOPPING);
  });

  it("a drain waiting when the last request leaves ends then, not at its bound", async () => {
    const gate = createReadiness();
    gate.enter();
    // Far past the test's own timeout: only the leave can end it in time.
    const drained = gate.drained(600_000);
    gate.leave();
    expect(await drained).toBe(true);
  });
});
