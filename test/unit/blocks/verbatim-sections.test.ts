import { validateBlocks } from "@onair/slack-emulator";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { verbatimSections } from "../../../src/blocks/kit.ts";
import { digestText, emptyPending } from "../../../src/live/digest.ts";

/** The texts of the sections, in order. */
function texts(blocks: unknown[]): string[] {
  return blocks.map((b) => (b as { text: { text: string } }).text.text);
}

describe("verbatimSections", () => {
  it("keeps short text whole, in one verbatim section", () => {
    const blocks = verbatimSections("• Ann joined\nNow 1 attending.");
    expect(blocks).toEqual([
      {
        type: "section",
        text: { type: "mrkdwn", text: "• Ann joined\nNow 1 attending.", verbatim: true },
      },
    ]);
  });

  it("splits a long line at its commas, never cutting a name or an entity", () => {
    const names = Array.from({ length: 40 }, (_, i) => `Name&amp;${i} ${"x".repeat(100)}`);
    const line = `*Joined:* ${names.join(", ")}`;
    const blocks = verbatimSections(line);
    expect(validateBlocks(blocks).messages).toEqual([]);
    const joined = texts(blocks).join(" ");
    for (const n of names) expect(joined).toContain(n);
  });

  it("a digest of the widest names and e-mails, astral characters included, always posts", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            name: fc.string({ unit: "binary", maxLength: 80 }),
            email: fc.string({ unit: "binary", maxLength: 120 }),
          }),
          { minLength: 1, maxLength: 30 },
        ),
        fc.constantFrom("every", "digest"),
        (people, noise) => {
          const p = emptyPending();
          for (const [i, x] of people.entries()) {
            p.joined++;
            p.sample.push([i % 3 === 0 ? "l" : "j", x.name, x.email]);
          }
          const text = digestText(noise, p, { present: 3 }, true);
          expect(validateBlocks(verbatimSections(text)).messages).toEqual([]);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("a single name over the limit is cut whole characters short, with no broken entity", () => {
    const emoji = "😀".repeat(2_000); // 4,000 UTF-16 units
    const [block] = texts(verbatimSections(`${emoji}&amp;`));
    expect(block!.length).toBeLessThanOrEqual(3000);
    expect(block!.endsWith("…")).toBe(true);
    expect(block).not.toMatch(/[\uD800-\uDBFF]…$/);
    expect(validateBlocks(verbatimSections("&amp;".repeat(1_000))).messages).toEqual([]);
  });
});
