import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Playground } from "../../src/playground/runtime.ts";
import { startTestPlayground } from "../helpers/playground.ts";

/**
 * The page's times in a browser whose own zone is none of the people's (Honolulu): every time on
 * the page, the Live tab's log included, is in the acting person's zone.
 */

const BROWSER_ZONE = "Pacific/Honolulu";
const OMAR = "U0OMAR0ORG"; // Europe/Berlin
const KEI = "U0KEI0ORG"; // Asia/Tokyo

let dir: string;
let pg: Playground;
let browser: Browser;
let page: Page;
const logs: string[] = [];

/** The clock times (h:mm) a line logged between `from` and now may show in `tz`. */
function clockTimes(tz: string, from: number): string[] {
  const f = new Intl.DateTimeFormat("en-US", { timeZone: tz, hour: "numeric", minute: "2-digit" });
  const out = new Set<string>();
  for (let t = from - 60_000; t <= Date.now() + 60_000; t += 30_000) {
    out.add(f.format(t).replace(/\s/g, " "));
  }
  return [...out];
}

/** The clock time the newest log line opens with, without its seconds: "6:05:09 PM" → "6:05 PM". */
async function newestLogTime(): Promise<string> {
  const text = await page.locator('[data-testid="live-log"] .log-line').first().textContent();
  const m = /^(\d{1,2}:\d\d):\d\d\s([AP]M)/.exec(String(text));
  return m ? `${m[1]} ${m[2]}` : `no time in "${text}"`;
}

describe("playground times in a browser of another zone", () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "onair-pg-zones-"));
    pg = await startTestPlayground(dir, logs);
    browser = await chromium.launch({
      executablePath: "/usr/bin/chromium",
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    });
    const context = await browser.newContext({
      timezoneId: BROWSER_ZONE,
      viewport: { width: 1400, height: 900 },
    });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(pg.url);
    await page.selectOption('[data-testid="acting-user"]', OMAR);
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    await pg?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("shows the Live tab's log times in the acting person's zone, not the browser's", async () => {
    expect(await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone)).toBe(
      BROWSER_ZONE,
    );
    await expect.poll(() => page.locator("#tz").textContent()).toBe("times in Europe/Berlin");
    // One workspace (no PLAYGROUND_ORG): no workspace switch.
    expect(await page.locator("#workspace-pick").isVisible()).toBe(false);
    const from = Date.now();
    await page.click("#fault-clear");
    const line = page.locator('[data-testid="live-log"] .log-line').first();
    await expect.poll(() => line.textContent()).toMatch(/faults cleared$/);
    // Berlin and Honolulu are 11 or 12 hours apart: the browser's clock cannot pass for Berlin's.
    expect(clockTimes("Europe/Berlin", from)).toContain(await newestLogTime());
    expect(clockTimes(BROWSER_ZONE, from)).not.toContain(await newestLogTime());

    // Another person reads the same log in their own zone.
    await page.selectOption('[data-testid="acting-user"]', KEI);
    await expect.poll(() => page.locator("#tz").textContent()).toBe("times in Asia/Tokyo");
    await expect
      .poll(() => newestLogTime())
      .toSatisfy((t: string) => clockTimes("Asia/Tokyo", from).includes(t));
  });
});
