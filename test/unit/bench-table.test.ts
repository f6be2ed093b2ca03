import { describe, expect, it } from "vitest";
import { fmt, fmtAgainst } from "../../bench/harness/table.ts";

describe("the bench table's ratios against a bar", () => {
  it("prints two places when they tell the ratio from the bar", () => {
    expect(fmtAgainst(1.26, 2)).toBe("1.26");
    expect(fmtAgainst(0.84, 0.8)).toBe("0.84");
    expect(fmtAgainst(2.52, 2)).toBe("2.52");
  });

  it("prints more places where two would print the bar for a ratio that is not it", () => {
    expect(fmtAgainst(2.004, 2)).toBe("2.004");
    expect(fmtAgainst(1.996, 2)).toBe("1.996");
    expect(fmtAgainst(0.7996, 0.8)).toBe("0.7996");
    expect(fmtAgainst(0.8041, 0.8)).toBe("0.804");
  });

  it("prints the bar itself as two places, and what is not a number as n/a", () => {
    expect(fmtAgainst(2, 2)).toBe("2.00");
    expect(fmtAgainst(Number.NaN, 2)).toBe("n/a");
    expect(fmt(Number.POSITIVE_INFINITY, 2)).toBe("n/a");
  });
});
