import { describe, expect, it } from "vitest";
import { HeldCursor } from "../../../src/live/held-cursor.ts";

/**
 * The held sweep's cursor (src/live/held-cursor.ts) with no store: the sweeps of
 * test/integration/live-set-aside.test.ts, told as the engine tells it.
 */
describe("the held sweep's cursor", () => {
  it("starts at the start and moves past each page handled to its end", () => {
    const c = new HeldCursor();
    expect(c.from).toBeUndefined();
    c.handled("t:E2:9");
    expect(c.from).toBe("t:E2:9");
    c.handled(undefined);
    expect(c.from).toBeUndefined();
  });

  it("stays where a sweep the store cut short read from, once from each place", () => {
    const c = new HeldCursor();
    c.handled("t:E1:5");
    c.cutShort("t:E1:5", "t:E3:2");
    expect(c.from).toBe("t:E1:5");
    // A failure from another place is that place's first: nothing is stepped past.
    c.cutShort("t:E0:1", "t:E3:2");
    expect(c.from).toBe("t:E1:5");
  });

  it("steps past a page the store cut short twice in a row from the same place", () => {
    const c = new HeldCursor();
    c.handled("t:E1:5");
    c.cutShort("t:E1:5", "t:E3:2");
    c.cutShort("t:E1:5", "t:E3:2");
    expect(c.from).toBe("t:E3:2");
    // The count starts again from there: one more failure keeps the new place.
    c.cutShort("t:E3:2", "t:E4:1");
    expect(c.from).toBe("t:E3:2");
  });

  it("counts only failures in a row: a page handled in between starts the count again", () => {
    const c = new HeldCursor();
    c.cutShort(undefined, "t:E3:2");
    c.handled(undefined);
    c.cutShort(undefined, "t:E3:2");
    expect(c.from).toBeUndefined();
    c.cutShort(undefined, "t:E3:2");
    expect(c.from).toBe("t:E3:2");
  });
});
