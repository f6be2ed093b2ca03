import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ReportChartInput,
  reportChartBlock,
  reportFiguresBlock,
} from "../../src/blocks/report-chart-blocks.ts";
import type { Playground } from "../../src/playground/runtime.ts";
import { startTestPlayground } from "../helpers/playground.ts";
import { createSecretScanner } from "../helpers/secrets.ts";

/**
 * This morning's Slack surfaces in the playground, in a real browser (Debian's chromium through
 * playwright-core): a Workflow Builder step run from the page with its completion; a pasted join
 * link as today's unfurl while Work Object previews are off and as a Work Object once on, its
 * flexpane per person and its buttons; the report's native chart and table drawn in its thread.
 * Screenshots named `surfaces-*` go where playground-browser.test.ts puts its own.
 */

const CHROMIUM = "/usr/bin/chromium";
const SHOTS = resolve(
  process.env.ONAIR_SCREENSHOTS ?? join(import.meta.dirname, "../../test-results/playground"),
);
const OMAR = "U0OMAR0ORG";
const MEMBER = "U0MIA0MEMBER";
const TITLE = "Steps all-hands";

let dir: string;
let pg: Playground;
let context: BrowserContext;
let page: Page;
let eventId = "";
let joinUrl = "";
const logs: string[] = [];
const pageErrors: string[] = [];

async function shot(name: string) {
  await page.screenshot({ path: join(SHOTS, `surfaces-${name}.png`) });
}

async function actAs(user: string) {
  await page.selectOption('[data-testid="acting-user"]', user);
  await expect.poll(() => page.locator('[data-testid="acting-user"]').inputValue()).toBe(user);
}

async function openPlace(place: string) {
  const item = page.locator(`[data-place="${place}"]`);
  for (let attempt = 1; ; attempt++) {
    await item.click();
    try {
      await expect
        .poll(() => page.locator(`[data-place="${place}"].active`).count(), { timeout: 2_000 })
        .toBe(1);
      return;
    } catch (err) {
      if (attempt >= 3) throw err;
    }
  }
}

async function say(text: string) {
  const composer = page.locator('[data-testid="composer"]');
  await composer.fill(text);
  await composer.press("Enter");
}

async function control(path: string, body: unknown) {
  const res = await fetch(`${pg.app.origin}/playground/api/control/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
}

/** "YYYY-MM-DDTHH:mm" in a zone: what a datetime-local input holds for that instant there. */
function wallTime(ms: number, zone: string): string {
  const p = Object.fromEntries(
    new Intl.DateTimeFormat("en-CA", {
      timeZone: zone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
    })
      .formatToParts(ms)
      .map((x) => [x.type, x.value]),
  );
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}`;
}

/** The step's event's card in #events. */
function card() {
  return page
    .locator('#feed [data-testid="message"]')
    .filter({ has: page.locator(".bk-header", { hasText: TITLE }) });
}

/** The messages in the open channel that carry the join link as text. */
function shared() {
  return page.locator('#feed [data-testid="message"]').filter({ hasText: "Join us" });
}

describe("the playground's Slack surfaces in a browser", () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "onair-pg-surfaces-"));
    mkdirSync(SHOTS, { recursive: true });
    // Only this run's pictures of these surfaces: an old one must not pass for a new one.
    for (const f of readdirSync(SHOTS)) if (f.startsWith("surfaces-")) rmSync(join(SHOTS, f));
    pg = await startTestPlayground(dir, logs);
    context = await chromium.launchPersistentContext(join(dir, "chromium-profile"), {
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
      viewport: { width: 1400, height: 900 },
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.on("pageerror", (err) => pageErrors.push(err.message));
    page.setDefaultTimeout(10_000);
    await page.goto(`${pg.app.origin}/playground`);
    await page.selectOption('[data-testid="acting-user"]', OMAR);
  }, 30_000);

  afterAll(async () => {
    await context?.close();
    await pg?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs schedule_live_event from the Workflow steps tab and shows its outputs; a refused run shows its sentence", async () => {
    await openPlace("C0EVENTS");
    await page.click('[data-testid="tab-steps"]');
    const form = page.locator('[data-testid="step-form"]');
    await expect.poll(() => page.locator("#step-pick").inputValue()).toBe("schedule_live_event");
    await form.locator('[data-input="title"]').fill(TITLE);
    // Omar reads Berlin time: the pickers are his wall time.
    const start = Date.now() + 2 * 86_400_000;
    await form.locator('[data-input="start"]').fill(wallTime(start, "Europe/Berlin"));
    await form.locator('[data-input="end"]').fill(wallTime(start + 3_600_000, "Europe/Berlin"));
    await form.locator('[data-input="organizer"]').selectOption(OMAR);
    await form.locator('[data-input="channel"]').selectOption("C0EVENTS");
    await page.click('[data-testid="step-run"]');
    const result = page.locator('[data-testid="step-result"]').first();
    await expect.poll(() => result.textContent(), { timeout: 15_000 }).toContain("completed");
    eventId = String(await result.locator('[data-output="event_id"]').textContent());
    joinUrl = String(await result.locator('[data-output="join_url"]').textContent());
    expect(eventId).not.toBe("");
    expect(joinUrl).toMatch(/^https:\/\//);
    // The start output is the instant typed (to the minute), shown in Omar's zone.
    const execution = [...pg.emulator.workspace.functionExecutions.values()].at(-1);
    expect(Math.floor(Number(execution?.outputs?.start) / 60)).toBe(Math.floor(start / 60_000));
    // As from the slash command: the event's card in the channel named.
    await expect.poll(() => card().count(), { timeout: 10_000 }).toBe(1);

    // The next step reads its attendance, its event id offered from the first step's output.
    await page.selectOption("#step-pick", "get_event_attendance");
    await expect.poll(() => form.locator('[data-input="event_id"]').inputValue()).toBe(eventId);
    await page.click('[data-testid="step-run"]');
    const read = page.locator('[data-testid="step-result"]').first();
    await expect
      .poll(() => read.textContent(), { timeout: 15_000 })
      .toContain("get_event_attendance");
    expect(await read.locator('[data-output="state"]').textContent()).toBe("NOT_STARTED");
    expect(await read.locator('[data-output="peak"]').textContent()).toBe("0");
    await page.locator("#step-results").scrollIntoViewIfNeeded();
    await shot("1-step-completions");

    // An end before the start: the step completes with its error, nothing created.
    await page.selectOption("#step-pick", "schedule_live_event");
    await form.locator('[data-input="title"]').fill("Backwards");
    await form.locator('[data-input="start"]').fill(wallTime(start, "Europe/Berlin"));
    await form.locator('[data-input="end"]').fill(wallTime(start - 3_600_000, "Europe/Berlin"));
    await page.click('[data-testid="step-run"]');
    const refused = page.locator('[data-testid="step-result"]').first();
    await expect.poll(() => refused.locator(".step-error").count(), { timeout: 15_000 }).toBe(1);
    expect(await refused.textContent()).toContain("failed");
    expect(await refused.locator(".step-error").textContent()).toMatch(/end/i);
    expect(await refused.locator("[data-output]").count()).toBe(0);
    expect(await page.locator('[data-testid="step-result"]').count()).toBe(3);
    // What was typed stays in the form after a run, as Workflow Builder keeps a step's inputs.
    expect(await form.locator('[data-input="title"]').inputValue()).toBe("Backwards");
  });

  it("with Work Object previews switched on, a pasted join link unfurls as a Work Object card", async () => {
    await control("state", { eventId, state: "IN_EVENT" });
    await control("attendees", { eventId, join: ["Grace Hopper", "Linus"] });
    await openPlace("C0EVENTS");
    await expect
      .poll(() => card().textContent(), { timeout: 15_000 })
      .toMatch(/Live now[\s\S]*now 2 · peak 2/);

    // Off, as on a new app. On (before the first paste: the app remembers a refusal for a while
    // and sends today's unfurl meanwhile), the paste is a Work Object card, and only that.
    const toggle = page.locator('[data-testid="work-objects-switch"]');
    expect(await toggle.isChecked()).toBe(false);
    await toggle.click();
    await expect.poll(() => toggle.isChecked()).toBe(true);
    await say(`Join us: ${joinUrl}`);
    await expect.poll(() => shared().count()).toBe(1);
    const wo = shared().first().locator('[data-testid="work-object"]');
    await expect.poll(() => wo.count(), { timeout: 10_000 }).toBe(1);
    expect(await shared().first().locator(".attachment").count()).toBe(0);
    expect(await wo.locator(".wo-title").textContent()).toBe(TITLE);
    expect(await wo.locator('[data-key="state"] .wo-value').textContent()).toBe("Live now");
    expect(await wo.locator('[data-key="organizer"] .wo-value').textContent()).toBe(
      "@Omar Organizer",
    );
    // #events is a channel the event notifies: the attendees now show.
    expect(await wo.locator('[data-key="present"] .wo-value').textContent()).toBe("2");
    // The start, in Omar's zone as Slack shows a timestamp field.
    expect(await wo.locator('[data-key="start"] time').getAttribute("title")).toContain(
      "Europe/Berlin",
    );
    await wo.scrollIntoViewIfNeeded();
    await shot("2-work-object");
  });

  it("opens the Work Object's flexpane per person; its buttons go through the card's own path; off, the link unfurls as today's blocks", async () => {
    const wo = shared().first().locator('[data-testid="work-object"]');
    await wo.click();
    const pane = page.locator('[data-testid="flexpane"]');
    await expect.poll(() => pane.count(), { timeout: 10_000 }).toBe(1);
    expect(await pane.locator(".wo-title").textContent()).toBe(TITLE);
    // The organizer sees the figures, the join link and the staff links.
    expect(await pane.locator('[data-key="present"] .wo-value').textContent()).toBe("2");
    expect(await pane.locator('[data-key="join"] a').getAttribute("href")).toBe(joinUrl);
    expect(await pane.locator('[data-key="moderator_link"]').count()).toBe(1);
    await shot("3-flexpane");

    // Attendance, pressed in the flexpane: the app answers the presser in the channel.
    await pane.locator("button", { hasText: "Attendance" }).click();
    const answer = page.locator('#feed [data-testid="ephemeral"]').filter({ hasText: /unique/ });
    await expect.poll(() => answer.count(), { timeout: 10_000 }).toBe(1);

    // Mia, a member of the notified channel: the figures, never the staff links.
    await actAs(MEMBER);
    await openPlace("C0EVENTS");
    await shared().first().locator('[data-testid="work-object"]').click();
    await expect
      .poll(() => pane.locator('[data-key="present"] .wo-value').textContent(), {
        timeout: 10_000,
      })
      .toBe("2");
    expect(await pane.locator('[data-key="moderator_link"]').count()).toBe(0);
    expect(await pane.locator('[data-key="panelist_link"]').count()).toBe(0);
    expect(await pane.locator('[data-key="join"]').count()).toBe(1);

    // Mia in #general, a channel the event does not notify: the card and the flexpane come
    // without the attendees, never as an error.
    await openPlace("C0GENERAL");
    await say(`Join us: ${joinUrl}`);
    const elsewhere = shared().first().locator('[data-testid="work-object"]');
    await expect.poll(() => elsewhere.count(), { timeout: 10_000 }).toBe(1);
    expect(await elsewhere.locator('[data-key="state"] .wo-value').textContent()).toBe("Live now");
    expect(await elsewhere.locator('[data-key="present"]').count()).toBe(0);
    await elsewhere.click();
    await expect
      .poll(() => pane.locator('[data-key="state"] .wo-value').textContent(), { timeout: 10_000 })
      .toBe("Live now");
    await expect.poll(() => pane.locator(".muted").first().textContent()).toContain("#general");
    expect(await pane.locator('[data-key="present"]').count()).toBe(0);
    expect(await pane.locator('[data-key="moderator_link"]').count()).toBe(0);
    expect(await pane.locator(".wo-error").count()).toBe(0);

    // Off: Slack refuses the Work Object, and the link unfurls as today's blocks, once.
    await actAs(OMAR);
    await openPlace("C0EVENTS");
    await page.click('[data-testid="work-objects-switch"]');
    await expect
      .poll(() => page.locator('[data-testid="work-objects-switch"]').isChecked())
      .toBe(false);
    await say(`Join us again: ${joinUrl}`);
    await expect.poll(() => shared().count()).toBe(2);
    await expect
      .poll(() => shared().nth(1).locator(".attachment").count(), { timeout: 10_000 })
      .toBe(1);
    expect(await shared().nth(1).locator('[data-testid="work-object"]').count()).toBe(0);
    expect(await shared().nth(1).textContent()).toContain(TITLE);
  });

  it("draws the report's native chart and table in the card's thread when the event ends", async () => {
    await control("state", { eventId, state: "NOT_STARTED" });
    await openPlace("C0EVENTS");
    await expect.poll(() => card().locator(".replies").count(), { timeout: 15_000 }).toBe(1);
    await card().locator(".replies").click();
    const thread = page.locator('[data-testid="thread"]');
    const chart = thread.locator('[data-block-id="onair_report_chart"]');
    await expect.poll(() => chart.count(), { timeout: 20_000 }).toBe(1);
    // Every point of the series is drawn, at the value it carries.
    const block = pg.emulator.workspace.channels
      .get("C0EVENTS")!
      .messages.flatMap((m) => (m.blocks ?? []) as Array<Record<string, unknown>>)
      .find((b) => b.block_id === "onair_report_chart") as {
      title: string;
      chart: { series: Array<{ data: Array<{ value: number }> }> };
    };
    const values = block.chart.series[0]!.data.map((d) => String(d.value));
    expect(
      await chart
        .locator("circle")
        .evaluateAll((cs) => cs.map((c) => c.getAttribute("data-value"))),
    ).toEqual(values);
    expect(await chart.locator("figcaption").textContent()).toBe(block.title);
    const table = thread.locator('[data-block-id="onair_report_figures"] table');
    expect(await table.locator("caption").textContent()).toBe("Attendance figures");
    const row = (name: string) => table.locator("tbody tr").filter({ hasText: name });
    expect(await row("Peak").locator("td").textContent()).toBe("2");
    expect(await row("Unique").locator("td").textContent()).toBe("2");
    await chart.scrollIntoViewIfNeeded();
    await shot("4-report-chart-and-table");
  });

  it("draws a long instance's chart within Slack's limits: 20 points, every one labelled or spaced", async () => {
    // A 3-hour instance's blocks as the report builds them, posted as the app would post them.
    const start = Date.UTC(2030, 0, 15, 14, 0);
    const counts = Int32Array.from({ length: 180 }, (_, i) =>
      Math.round(40 + 30 * Math.sin(i / 20)),
    );
    const input: ReportChartInput = {
      figures: {
        instanceId: "long",
        asOf: start + 180 * 60_000,
        peak: 70,
        unique: 120,
        presentAtEnd: 12,
        averageMinutes: 61.5,
        medianMinutes: 48,
        firstJoin: start,
        lastJoin: start + 170 * 60_000,
        ended: true,
      },
      series: { start, step: 60_000, counts },
      zone: "Europe/Berlin",
    };
    const ws = pg.emulator.workspace;
    const msg = ws.postMessage(ws.channels.get("C0TOWNHALL")!, ws.app.botUserId, {
      text: "A long instance's report",
      blocks: [reportChartBlock(input), reportFiguresBlock(input)],
    });
    await openPlace("C0TOWNHALL");
    const chart = page.locator(`[data-ts="${msg.ts}"] [data-block-id="onair_report_chart"]`);
    await expect.poll(() => chart.locator("circle").count()).toBe(20);
    // Labels are spaced so they never overlap: every fourth of the 20, the first among them.
    const ticks = await chart.locator("text.tick").allTextContents();
    expect(ticks).toContain("15:00");
    expect(ticks.filter((t) => /:/.test(t))).toHaveLength(5);
    const table = page.locator(`[data-ts="${msg.ts}"] [data-block-id="onair_report_figures"]`);
    // page_size 7 holds every data row: no pager.
    expect(await table.locator("tbody tr").count()).toBe(7);
    expect(await table.locator(".bk-table-pager").count()).toBe(0);
  });

  it("draws a call block as a call: its id alone, or the call Slack fills in (title, Join, who is in)", async () => {
    const ws = pg.emulator.workspace;
    const ch = ws.channels.get("C0TOWNHALL")!;
    const bare = ws.postMessage(ch, ws.app.botUserId, {
      text: "A call",
      blocks: [{ type: "call", call_id: "R0CALL1" }],
    });
    const filled = ws.postMessage(ch, ws.app.botUserId, {
      text: "A call, read back",
      blocks: [
        {
          type: "call",
          call_id: "R0CALL2",
          call: {
            v1: {
              id: "R0CALL2",
              name: "Town hall, live",
              join_url: "https://live.sandbox.example.com/123",
              date_start: Math.floor(Date.now() / 1000),
              active_participants: [
                { slack_id: OMAR },
                { external_id: "x1", display_name: "Grace" },
              ],
            },
          },
        },
      ],
    });
    await openPlace("C0TOWNHALL");
    const first = page.locator(`[data-ts="${bare.ts}"] [data-call-id="R0CALL1"]`);
    await expect.poll(() => first.count()).toBe(1);
    expect(await first.locator(".bk-call-title").textContent()).toBe("Slack call");
    expect(await first.locator("a.bk-button").count()).toBe(0);
    const second = page.locator(`[data-ts="${filled.ts}"] [data-call-id="R0CALL2"]`);
    expect(await second.locator(".bk-call-title").textContent()).toBe("Town hall, live");
    expect(await second.locator("a.bk-button", { hasText: "Join" }).getAttribute("href")).toBe(
      "https://live.sandbox.example.com/123",
    );
    expect(await second.locator(".bk-call-people").textContent()).toBe(
      "2 in: @Omar Organizer, Grace",
    );
  });

  it("answers bad input to the Work Object routes with the reason, changing nothing", async () => {
    const post = async (route: string, body: unknown) => {
      const res = await fetch(`${pg.app.origin}/playground/api/${route}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as { error?: string } };
    };
    const notBool = await post("work-objects", { enabled: "yes" });
    expect(notBool.status).toBe(400);
    expect(notBool.body.error).toMatch(/^enabled: /);
    const ws = pg.emulator.workspace;
    const plain = ws.postMessage(ws.channels.get("C0EVENTS")!, OMAR, { text: "no link here" });
    const none = await post("work-object/open", {
      user: OMAR,
      channel: "C0EVENTS",
      message_ts: plain.ts,
      url: "https://live.sandbox.example.com/1",
    });
    expect(none.status).toBe(409);
    expect(none.body.error).toMatch(/no Work Object/);
    // Kei has opened no flexpane: there is no button of one to press.
    const before = pg.emulator.calls.length;
    const pressed = await post("work-object/action", { user: "U0KEI0ORG", action_id: "x" });
    expect(pressed.status).toBe(409);
    expect(pressed.body.error).toMatch(/no flexpane open/);
    expect(pg.emulator.calls.length).toBe(before);
    const nobody = await post("work-object/action", { user: "U0NOBODY", action_id: "x" });
    expect(nobody.status).toBe(404);
  });

  it("runs no script errors and leaks no secret", async () => {
    expect(pageErrors).toEqual([]);
    const scanner = createSecretScanner();
    for (const line of logs) scanner.add("log", line);
    scanner.add("page", await page.content());
    scanner.assertNoSecrets(pg.secrets);
  });
});
