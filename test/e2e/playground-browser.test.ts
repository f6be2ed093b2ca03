import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../scripts/ports.ts";
import { type Playground, SANDBOX_FILE } from "../../src/playground/runtime.ts";
import { startTestPlayground } from "../helpers/playground.ts";
import { createSecretScanner } from "../helpers/secrets.ts";

/**
 * The playground in a real browser (Debian's chromium through playwright-core): the app
 * started in process in playground mode on port 0, the page driven as a person would.
 * Screenshots are kept under test-results/playground/ as artefacts.
 */

const CHROMIUM = "/usr/bin/chromium";
// `npm run screenshots` points this at docs/screenshots, the README's pictures.
const SHOTS = resolve(
  process.env.ONAIR_SCREENSHOTS ?? join(import.meta.dirname, "../../test-results/playground"),
);
const ADMIN = "U0ADA0ADMIN";
const OMAR = "U0OMAR0ORG";
const MEMBER = "U0MIA0MEMBER";

let dir: string;
let pg: Playground;
let context: BrowserContext;
let page: Page;
let eventId = "";
/** Every run's secrets: the page and logs must hold none of them. */
const secrets: string[] = [];
const logs: string[] = [];
const pageErrors: string[] = [];

async function shot(name: string) {
  await page.screenshot({ path: join(SHOTS, `${name}.png`) });
}

async function actAs(user: string) {
  await page.selectOption('[data-testid="acting-user"]', user);
}

/**
 * Opens a channel (or the App Home) from the sidebar. A click can be lost when the sidebar is
 * drawn again between the button going down and up (right after switching the acting user, the
 * page redraws it with that user's channels; seen once on CI: the composer never came): it is
 * clicked again until the place shows as open.
 */
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

/**
 * Marks the elements (data-mark="kept"; an element drawn again comes without it) and records,
 * in window.takenOut, every marked element taken out of `root` from now on, even to be put back:
 * a click whose button is taken out between down and up is lost. Returns how many it marked.
 */
function markAndWatch(root: string, selectors: string[]): Promise<number> {
  return page.evaluate(`(() => {
    const els = ${JSON.stringify(selectors)}.map((s) => document.querySelector(s)).filter(Boolean);
    for (const el of els) el.setAttribute("data-mark", "kept");
    window.takenOut = [];
    new MutationObserver((records) => {
      for (const r of records)
        for (const n of r.removedNodes)
          if (n.nodeType === 1 && (n.matches("[data-mark]") || n.querySelector("[data-mark]")))
            window.takenOut.push(n.className || n.tagName);
    }).observe(document.querySelector(${JSON.stringify(root)}), { childList: true, subtree: true });
    return els.length;
  })()`);
}

async function run(command: string) {
  const composer = page.locator('[data-testid="composer"]');
  await composer.fill(command);
  await composer.press("Enter");
}

let port = 0;

function start(): Promise<Playground> {
  // One port for every run, as `npm start` has: the sandbox's webhooks name it.
  return startTestPlayground(dir, logs, port);
}

/** Stops the playground and starts it again on the same data directory, as `npm start` would. */
async function restart(between?: () => void) {
  secrets.push(...pg.secrets);
  await pg.close();
  between?.();
  pg = await start();
  await page.goto(`${pg.app.origin}/playground`);
  await actAs(OMAR);
}

describe("playground in a browser", () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "onair-pg-browser-"));
    // Only this run's screenshots: an old one must not pass for a new one. The `surfaces-*`
    // ones are playground-surfaces.test.ts's, which `npm run screenshots` runs beside this file.
    mkdirSync(SHOTS, { recursive: true });
    for (const f of readdirSync(SHOTS)) if (!f.startsWith("surfaces-")) rmSync(join(SHOTS, f));
    port = await freePort();
    pg = await start();
    context = await chromium.launchPersistentContext(join(dir, "chromium-profile"), {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
      viewport: { width: 1400, height: 900 },
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.on("pageerror", (err) => pageErrors.push(err.message));
    page.setDefaultTimeout(10_000);
    await page.goto(`${pg.app.origin}/playground`);
    await actAs(ADMIN);
  }, 30_000);

  afterAll(async () => {
    await context?.close();
    await pg?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs /onair help from the composer; the answer is shown to its user only", async () => {
    await openPlace("C0EVENTS");
    await run("/onair help");
    const answer = page.locator('[data-testid="ephemeral"]').filter({ hasText: "/onair schedule" });
    await expect.poll(() => answer.count()).toBe(1);
    await expect.poll(() => answer.first().locator("text=Only visible to you").count()).toBe(1);
    // Inline code in mrkdwn is drawn as code, not as text with backticks.
    expect(await answer.first().locator("code", { hasText: "/onair help" }).count()).toBe(1);
    await shot("01-help");

    await actAs(MEMBER);
    await expect.poll(() => page.locator('[data-testid="acting-user"]').inputValue()).toBe(MEMBER);
    await expect.poll(() => page.locator('[data-testid="ephemeral"]').count()).toBe(0);
    await actAs(ADMIN);
    await expect.poll(() => page.locator('[data-testid="ephemeral"]').count()).toBe(1);
  });

  it("posts messages, renders mentions, channels and dates in the viewer's zone, and threads replies", async () => {
    await actAs(OMAR);
    await openPlace("C0EVENTS");
    const at = Date.UTC(2030, 0, 15, 17, 0) / 1000;
    await run(`Kick-off with <@${ADMIN}> in <#C0GENERAL> at <!date^${at}^{time}|5pm UTC>, *bold*`);
    const msg = page.locator('[data-testid="message"]').filter({ hasText: "Kick-off" });
    await expect.poll(() => msg.count()).toBe(1);
    // Omar reads Berlin time (18:00); Kei reads Tokyo time (02:00).
    await expect.poll(() => msg.locator("time").textContent()).toBe("6:00 PM");
    expect(await msg.locator(".mention").first().textContent()).toBe("@Ada Admin");
    expect(await msg.locator(".mention.channel").textContent()).toBe("#general");
    expect(await msg.locator("b").textContent()).toBe("bold");
    await actAs("U0KEI0ORG");
    await expect.poll(() => msg.locator("time").textContent()).toBe("2:00 AM");

    // A reply in a thread, from the thread pane.
    await actAs(OMAR);
    const ts = await msg.getAttribute("data-ts");
    pg.emulator.workspace.postMessage(pg.emulator.workspace.channels.get("C0EVENTS")!, MEMBER, {
      text: "first reply",
      thread_ts: ts ?? undefined,
    });
    await page.click(`[data-thread="${ts}"]`);
    const thread = page.locator('[data-testid="thread"]');
    await expect.poll(() => thread.locator("text=first reply").count()).toBe(1);
    const reply = page.locator('[data-testid="thread-composer"]');
    await reply.fill("second reply");
    await reply.press("Enter");
    await expect.poll(() => thread.locator("text=second reply").count()).toBe(1);
    await expect.poll(() => msg.locator(".replies").textContent()).toContain("2 replies");
    await shot("02-thread");
  });

  it("shows an edited message updated in place and scheduled messages listed", async () => {
    const ws = pg.emulator.workspace;
    const ch = ws.channels.get("C0TOWNHALL")!;
    const m = ws.postMessage(ch, ws.app.botUserId, { text: "Version one" });
    ws.scheduleMessage(ch, ws.app.botUserId, Math.floor(Date.now() / 1000) + 3600, {
      text: "Reminder: the town hall starts in an hour",
    });
    await openPlace("C0TOWNHALL");
    const msg = page.locator(`[data-ts="${m.ts}"]`);
    await expect.poll(() => msg.textContent()).toContain("Version one");
    ws.updateMessage(ch, m.ts, undefined, {
      text: "Version two",
      blocks: [
        { type: "header", text: { type: "plain_text", text: "Version two" } },
        {
          type: "section",
          fields: [
            { type: "mrkdwn", text: "*State:* live" },
            { type: "mrkdwn", text: "*Now:* 3" },
          ],
        },
        { type: "divider" },
        { type: "context", elements: [{ type: "mrkdwn", text: "updated in place" }] },
      ],
    });
    await expect.poll(() => msg.locator(".bk-header").textContent()).toBe("Version two");
    expect(await msg.locator('[data-testid="edited"]').count()).toBe(1);
    expect(await msg.locator(".bk-field").count()).toBe(2);
    expect(await page.locator(`[data-ts]`).filter({ hasText: "Version one" }).count()).toBe(0);
    await expect.poll(() => page.locator('[data-testid="scheduled-count"]').count()).toBe(1);
    await page.click('[data-testid="scheduled"] summary');
    expect(await page.locator('[data-testid="scheduled"]').textContent()).toContain(
      "starts in an hour",
    );
    await shot("03-edited-and-scheduled");
  });

  it("draws again only the message that changed: the others keep their elements, an opened list stays open, in a thread too", async () => {
    const ws = pg.emulator.workspace;
    const ch = ws.channels.get("C0TOWNHALL")!;
    const still = ws.postMessage(ch, ws.app.botUserId, {
      text: "Stays as it is",
      blocks: [
        { type: "section", text: { type: "mrkdwn", text: "Stays as it is" } },
        {
          type: "actions",
          elements: [
            { type: "button", action_id: "noop", text: { type: "plain_text", text: "Press" } },
          ],
        },
      ],
    });
    const live = ws.postMessage(ch, ws.app.botUserId, { text: "Now: 1" });
    ws.scheduleMessage(ch, ws.app.botUserId, Math.floor(Date.now() / 1000) + 7200, {
      text: "Reminder: two hours to go",
    });
    await openPlace("C0TOWNHALL");
    const stillEl = page.locator(`[data-ts="${still.ts}"]`);
    await expect.poll(() => stillEl.textContent()).toContain("Stays as it is");
    const list = page.locator('[data-testid="scheduled"]');
    await expect.poll(() => list.textContent()).toContain("two hours to go");
    if ((await list.getAttribute("open")) === null) await list.locator("summary").click();
    await expect.poll(() => list.getAttribute("open")).not.toBeNull();
    // Marks on the elements themselves (an element drawn again comes without them), and every
    // marked element taken out of the page from here on, even to be put back: a click whose
    // button is taken out between down and up is lost.
    const marked = await markAndWatch("#main", [
      "#feed",
      `[data-ts="${still.ts}"]`,
      `[data-ts="${still.ts}"] button`,
    ]);
    expect(marked).toBe(3);
    for (const n of [2, 3, 4]) {
      ws.updateMessage(ch, live.ts, undefined, { text: `Now: ${n}` });
      await expect
        .poll(() => page.locator(`[data-ts="${live.ts}"]`).textContent())
        .toContain(`Now: ${n}`);
    }
    const fresh = ws.postMessage(ch, ws.app.botUserId, { text: "Just posted" });
    await expect.poll(() => page.locator(`[data-ts="${fresh.ts}"]`).count()).toBe(1);
    expect(await page.locator('#feed[data-mark="kept"]').count()).toBe(1);
    expect(await stillEl.getAttribute("data-mark")).toBe("kept");
    expect(await stillEl.locator("button").getAttribute("data-mark")).toBe("kept");
    // The updated message itself was drawn again (it never had a mark).
    expect(await page.locator(`[data-ts="${live.ts}"][data-mark]`).count()).toBe(0);
    expect(await list.getAttribute("open")).not.toBeNull();
    expect(await page.evaluate("window.takenOut")).toEqual([]);

    // In a thread too: a reply stays put while its parent changes and more replies come.
    const first = ws.postMessage(ch, MEMBER, { text: "First reply", thread_ts: live.ts });
    await page.click(`[data-thread="${live.ts}"]`);
    const thread = page.locator('[data-testid="thread"]');
    await expect.poll(() => thread.locator(`[data-ts="${first.ts}"]`).count()).toBe(1);
    expect(await markAndWatch("#thread", [`[data-testid="thread"] [data-ts="${first.ts}"]`])).toBe(
      1,
    );
    ws.updateMessage(ch, live.ts, undefined, { text: "Now: 5" });
    const second = ws.postMessage(ch, MEMBER, { text: "Second reply", thread_ts: live.ts });
    await expect.poll(() => thread.locator(`[data-ts="${second.ts}"]`).count()).toBe(1);
    await expect.poll(() => thread.textContent()).toContain("Now: 5");
    expect(await thread.locator(`[data-ts="${first.ts}"]`).getAttribute("data-mark")).toBe("kept");
    expect(await page.evaluate("window.takenOut")).toEqual([]);
  });

  it("schedules an event from /onair schedule: an inline error first, then the confirmation and the card", async () => {
    await actAs(OMAR);
    await openPlace("C0EVENTS");
    await run("/onair schedule");
    const modal = page.locator('[data-testid="modal"]');
    // A placeholder first ("One moment…"); the form replaces it when the app's views.update
    // lands, which on a loaded machine takes longer than expect.poll's default second.
    await expect
      .poll(() => modal.locator('[data-block-id="ev_title"] input').count(), { timeout: 10_000 })
      .toBe(1);
    await modal.locator('[data-block-id="ev_title"] input').fill("Playground town hall");
    // A dispatched select and number input: the app answers with views.update (new preview),
    // and what was typed survives the update.
    await modal.locator('[data-block-id="ev_recurrence"] select').selectOption("DAILY");
    const preview = modal.locator('[data-block-id="ev_preview"]');
    await expect.poll(() => preview.textContent()).toMatch(/how many times/i);
    const count = modal.locator('[data-block-id="ev_count"] input');
    // The preview follows as the count is typed (on_character_entered), no Enter needed.
    await count.fill("3");
    await expect.poll(() => preview.textContent()).toMatch(/Next dates/);
    expect(await modal.locator('[data-block-id="ev_title"] input').inputValue()).toBe(
      "Playground town hall",
    );
    // A multi-user picker: Kei as a panelist.
    await modal.locator('[data-block-id="ev_panelists"] select').selectOption("U0KEI0ORG");
    await expect
      .poll(() => modal.locator('[data-block-id="ev_panelists"] .chip').textContent())
      .toContain("Kei Organizer");
    // Omar's Slack zone is Berlin: the pickers show and read Berlin wall time.
    const start = Date.now() + 2 * 86_400_000;
    await modal.locator('[data-block-id="ev_start"] input').fill(wallTime(start, "Europe/Berlin"));
    await modal
      .locator('[data-block-id="ev_end"] input')
      .fill(wallTime(start - 3_600_000, "Europe/Berlin"));
    await shot("04-schedule-form");
    await modal.locator('[data-testid="modal-submit"]').click();
    const endError = modal.locator('[data-block-id="ev_end"] .bk-error');
    await expect.poll(() => endError.count()).toBe(1);
    expect(await endError.textContent()).toMatch(/end/i);
    await shot("05-schedule-inline-error");

    await modal
      .locator('[data-block-id="ev_end"] input')
      .fill(wallTime(start + 3_600_000, "Europe/Berlin"));
    // The live card goes to #events.
    await modal.locator('[data-block-id="ev_channel"] select').selectOption("C0EVENTS");
    await modal.locator('[data-testid="modal-submit"]').click();
    await expect.poll(() => modal.count(), { timeout: 10_000 }).toBe(0);

    // The organizer hears back, privately; the event is now one the live panel can drive.
    const done = page.locator('[data-testid="ephemeral"]').filter({ hasText: "Scheduled" });
    await expect.poll(() => done.count(), { timeout: 10_000 }).toBe(1);
    const option = page.locator('[data-testid="live-event"] option', {
      hasText: "Playground town hall",
    });
    await expect.poll(() => option.count(), { timeout: 10_000 }).toBe(1);
    eventId = String(await option.getAttribute("value"));
    expect(eventId).not.toBe("");
    // Its card, in the channel for everyone.
    await expect.poll(() => card().count(), { timeout: 10_000 }).toBe(1);
    await expect.poll(() => card().textContent()).toMatch(/Not started/);
    await shot("06-scheduled-card");
  });

  it("drives the event from the live panel: the card changes state and figures, the digest lands in its thread", async () => {
    // Mia, a member, watches the channel: the card is public.
    await actAs(MEMBER);
    await openPlace("C0EVENTS");
    await page.selectOption('[data-testid="live-event"]', eventId);
    const log = page.locator('[data-testid="live-log"]');
    await page.click('[data-state="PREP_EVENT"]');
    await expect.poll(() => log.textContent()).toMatch(/PREP_EVENT → 1 webhook delivery/);
    await expect.poll(() => card().textContent(), { timeout: 10_000 }).toMatch(/Getting ready/);
    await expect.poll(() => card().locator('[data-testid="edited"]').count()).toBe(1);
    await shot("07-card-prep");

    await page.click('[data-state="IN_EVENT"]');
    await expect.poll(() => card().textContent(), { timeout: 10_000 }).toMatch(/Live now/);
    await page.fill('[data-testid="live-names"]', "Grace Hopper, Linus");
    await page.click("#live-join");
    await expect.poll(() => log.textContent()).toMatch(/2 joined, 2 delivered/);
    await page.fill('[data-testid="live-count"]', "30");
    await page.click("#live-burst");
    await expect.poll(() => log.textContent()).toMatch(/burst: 30 joined, 30 delivered/);
    await page.fill("#live-leave-count", "3");
    await page.click("#live-leave");
    await expect.poll(() => log.textContent()).toMatch(/3 left, 29 present/);

    // The digest lands in the card's thread; the card's figures follow.
    await expect.poll(() => card().locator(".replies").count(), { timeout: 15_000 }).toBe(1);
    await card().locator(".replies").click();
    const thread = page.locator('[data-testid="thread"]');
    await expect.poll(() => thread.textContent(), { timeout: 15_000 }).toMatch(/joined/);
    await expect.poll(() => thread.textContent(), { timeout: 15_000 }).toMatch(/Grace Hopper/);
    await expect
      .poll(() => card().textContent(), { timeout: 15_000 })
      .toMatch(/now 29 · peak 32 · unique 32(?!\d)/);
    await expect
      .poll(() => page.locator('[data-testid="live-state"]').textContent())
      .toBe("IN EVENT");
    // The live instance as a Slack call in the card's thread, drawn as Slack's client fills it
    // in from the Calls API: the event's title, a Join button, who is in.
    const call = thread.locator(".bk-call");
    await expect.poll(() => call.count(), { timeout: 15_000 }).toBe(1);
    expect(await call.locator(".bk-call-title").textContent()).toBe("Playground town hall");
    expect(await call.locator("a.bk-button", { hasText: "Join" }).count()).toBe(1);
    await shot("07-card-live-and-digest");
    // A fault for the next events call, shown in the log, then cleared.
    await page.click("#tab-live");
    await page.selectOption("#fault-service", "events");
    await page.click("#fault-add");
    await expect.poll(() => log.textContent()).toMatch(/next 1 events call\(s\) fail with 503/);
    await page.click("#fault-clear");
    await expect.poll(() => log.textContent()).toMatch(/faults cleared/);
    await shot("08-live-panel-faults");
  });

  it("the live panel shows the card's figures; a re-join counts once; Attendance answers in the channel", async () => {
    await actAs(MEMBER);
    await openPlace("C0EVENTS");
    await page.selectOption('[data-testid="live-event"]', eventId);
    const status = page.locator("#live-status");
    // The panel's figures are the card's (29 here, 32 at the peak), not zeros.
    await expect.poll(() => status.textContent()).toMatch(/now 29.*peak 32.*unique 32/);
    // Grace is still here: joining her again is not a new attendee.
    const log = page.locator('[data-testid="live-log"]');
    await page.fill('[data-testid="live-names"]', "Grace Hopper");
    await page.click("#live-join");
    await expect
      .poll(() => log.textContent())
      .toMatch(/0 joined \(1 already here, not counted again\)/);
    await page.fill('[data-testid="live-names"]', "Ada Lovelace");
    await page.click("#live-join");
    await expect
      .poll(() => card().textContent(), { timeout: 15_000 })
      .toMatch(/now 30 · peak 32 · unique 33(?!\d)/);
    await expect.poll(() => status.textContent()).toMatch(/now 30.*peak 32.*unique 33/);
    await shot("08b-live-panel-figures");

    // Attendance: the answer shows in the channel, to the presser, not in the card's thread.
    await card().locator(".bk-button", { hasText: "Attendance" }).click();
    const answer = page.locator('#feed [data-testid="ephemeral"]').filter({ hasText: /unique/ });
    await expect.poll(() => answer.count(), { timeout: 10_000 }).toBe(1);
    expect(await answer.locator("text=Only visible to you").count()).toBe(1);
    await shot("08c-attendance-in-channel");
  });

  it("sends a card button as a block action: Edit opens the organizer's form, filled in", async () => {
    await actAs(OMAR);
    await openPlace("C0EVENTS");
    await card().locator(".bk-button", { hasText: "Edit" }).click();
    const modal = page.locator('[data-testid="modal"]');
    const title = modal.locator('[data-block-id="ev_title"] input');
    await expect.poll(() => title.count(), { timeout: 10_000 }).toBe(1);
    expect(await title.inputValue()).toBe("Playground town hall");
    await shot("09-edit-from-card");
    await page.keyboard.press("Escape");
    await expect.poll(() => modal.count()).toBe(0);
  });

  it("sends the live card to another channel when /onair notify is typed with #channel", async () => {
    // As the README says: typed in the composer, `#town` picked from the suggestions, so Slack
    // sends `<#C0TOWNHALL|town-hall>` (should_escape), which the app must read as the channel.
    await actAs(OMAR);
    await openPlace("C0EVENTS");
    const composer = page.locator('[data-testid="composer"]');
    await composer.fill("");
    await composer.pressSequentially(`/onair notify ${eventId} #to`);
    // A message arrives while they type: the channel re-renders, the composer keeps its focus.
    await pg.emulator.driver.postMessage({
      user: OMAR,
      channel: "C0EVENTS",
      text: "Arrived while typing",
    });
    await expect
      .poll(() => page.locator("#feed", { hasText: "Arrived while typing" }).count())
      .toBe(1);
    await page.keyboard.type("wn");
    expect(await composer.inputValue()).toBe(`/onair notify ${eventId} #town`);
    const hints = page.locator('#main [data-testid="composer-hints"]');
    await hints.locator(".hint", { hasText: "#town-hall" }).click();
    await composer.press("Enter");
    const done = page
      .locator('[data-testid="ephemeral"]')
      .filter({ hasText: "now go to" })
      .filter({ hasText: "town-hall" });
    await expect.poll(() => done.count(), { timeout: 10_000 }).toBe(1);
    // The bot was not in #town-hall (a public channel): it joined, and the card is there.
    await openPlace("C0TOWNHALL");
    await expect.poll(() => card().count(), { timeout: 10_000 }).toBe(1);
    await expect.poll(() => card().textContent()).toMatch(/Live now|Getting ready|Not started/);
  });

  it("shows the App Home tab; its button opens a modal, which closes", async () => {
    await actAs(MEMBER);
    await openPlace("home");
    const home = page.locator('[data-testid="home"]');
    const button = home.locator(".bk-button", { hasText: "Schedule an event" });
    await expect.poll(() => button.count()).toBe(1);
    await shot("10-home");
    await button.click();
    const modal = page.locator('[data-testid="modal"]');
    await expect.poll(() => modal.locator('[data-block-id="ev_title"]').count()).toBe(1);
    await modal.locator('[data-testid="modal-close"]').click();
    await expect.poll(() => modal.count()).toBe(0);
  });

  it("opens the settings modal for the admin, not for a member", async () => {
    await actAs(MEMBER);
    await openPlace("C0GENERAL");
    await run("/onair settings");
    const refusal = page.locator('[data-testid="ephemeral"]').filter({ hasText: /admin/i });
    await expect.poll(() => refusal.count()).toBeGreaterThan(0);
    expect(await page.locator('[data-testid="modal"]').count()).toBe(0);

    await actAs(ADMIN);
    await run("/onair settings");
    const modal = page.locator('[data-testid="modal"]');
    await expect.poll(() => modal.locator(".modal-title").textContent()).toMatch(/settings/i);
    await shot("11-settings");
    await modal.locator('[data-testid="modal-x"]').click();
    await expect.poll(() => modal.count()).toBe(0);
    // The calls the app made to Slack, for whoever is changing a modal.
    await page.click("#tab-calls");
    const calls = page.locator('[data-testid="calls"]');
    await expect
      .poll(() => calls.locator(".call-method", { hasText: "views.open" }).count())
      .toBeGreaterThan(0);
    await shot("12-slack-calls");
    await page.click("#tab-live");
  });

  it("a 503 at submit brings the schedule form back with everything typed and the reason", async () => {
    await actAs(OMAR);
    await openPlace("C0EVENTS");
    // The events service is about to fail once: set from the live panel's fault controls
    // (opening the form asks it nothing; the submit's create meets the fault, and a create is
    // never retried on a 503).
    await page.click("#tab-live");
    await page.selectOption("#fault-service", "events");
    await page.fill("#fault-times", "1");
    await page.click("#fault-add");
    const log = page.locator('[data-testid="live-log"]');
    await expect.poll(() => log.textContent()).toMatch(/next 1 events call\(s\) fail with 503/);
    await run("/onair schedule");
    const modal = page.locator('[data-testid="modal"]');
    const title = modal.locator('[data-block-id="ev_title"] input');
    await expect.poll(() => title.count(), { timeout: 10_000 }).toBe(1);
    await title.fill("Second try town hall");
    await modal
      .locator('[data-block-id="ev_description"] textarea, [data-block-id="ev_description"] input')
      .first()
      .fill("Typed once");
    const start = Date.now() + 3 * 86_400_000;
    await modal.locator('[data-block-id="ev_start"] input').fill(wallTime(start, "Europe/Berlin"));
    await modal
      .locator('[data-block-id="ev_end"] input')
      .fill(wallTime(start + 3_600_000, "Europe/Berlin"));
    await modal.locator('[data-testid="modal-submit"]').click();
    const note = modal.locator("text=Nothing was saved");
    await expect.poll(() => note.count(), { timeout: 10_000 }).toBe(1);
    expect(await note.textContent()).toMatch(/unavailable/);
    expect(await modal.locator('[data-block-id="ev_title"] input').inputValue()).toBe(
      "Second try town hall",
    );
    expect(
      await modal
        .locator(
          '[data-block-id="ev_description"] textarea, [data-block-id="ev_description"] input',
        )
        .first()
        .inputValue(),
    ).toBe("Typed once");
    await shot("11b-form-back-after-503");
    // The service is back: Schedule again.
    await modal.locator('[data-testid="modal-submit"]').click();
    await expect.poll(() => modal.count(), { timeout: 10_000 }).toBe(0);
    const done = page
      .locator('[data-testid="ephemeral"]')
      .filter({ hasText: "Second try town hall" });
    await expect.poll(() => done.count(), { timeout: 10_000 }).toBeGreaterThan(0);
  });

  it("converts picker wall times and <!date> tokens in the viewer's zone, across DST changes", async () => {
    // A string, not a function: vitest would rewrite a dynamic import inside a function.
    const out = (await page.evaluate(`(async () => {
      const m = await import("/playground/static/dates.js");
      const zones = ["Europe/Berlin", "America/New_York", "Asia/Tokyo", "Australia/Sydney"];
      // Around the 2026 changes: Berlin 29 Mar / 25 Oct, New York 8 Mar / 1 Nov, Sydney 5 Apr / 4 Oct.
      const instants = [
        Date.UTC(2026, 2, 29, 0, 30), Date.UTC(2026, 2, 29, 1, 30),
        Date.UTC(2026, 9, 25, 0, 30), Date.UTC(2026, 9, 25, 1, 30),
        Date.UTC(2026, 2, 8, 6, 30), Date.UTC(2026, 2, 8, 7, 30),
        Date.UTC(2026, 10, 1, 5, 30), Date.UTC(2026, 10, 1, 6, 30),
        Date.UTC(2026, 3, 4, 15, 30), Date.UTC(2026, 3, 4, 16, 30),
      ].map((ms) => ms / 1000);
      // Every instant shows as a wall time that reads back to an instant with that wall time;
      // exactly itself unless the wall time is one of the repeated hour's.
      const roundTrips = zones.flatMap((tz) =>
        instants.map((sec) => {
          const wall = m.epochToLocalInput(sec, tz);
          const back = m.localInputToEpoch(wall, tz);
          return m.epochToLocalInput(back, tz) === wall && (back === sec || back === sec - 3600);
        }),
      );
      const exact = zones.flatMap((tz) =>
        instants.filter((sec) => m.localInputToEpoch(m.epochToLocalInput(sec, tz), tz) === sec).length,
      );
      const repeated = m.localInputToEpoch("2026-10-25T02:30", "Europe/Berlin") - Date.UTC(2026, 9, 25, 0, 30) / 1000;
      const skipped = m.epochToLocalInput(m.localInputToEpoch("2026-03-29T02:30", "Europe/Berlin"), "Europe/Berlin");
      const at = Date.UTC(2030, 0, 15, 17, 5) / 1000;
      return {
        roundTrips,
        exact,
        repeated,
        skipped,
        berlin: m.formatSlackDate(at, "{date_num} {time} · {date_short} · {date_long}", "Europe/Berlin"),
        tokyo: m.formatSlackDate(at, "{date_num} {time}", "Asia/Tokyo"),
      };
    })()`)) as {
      roundTrips: boolean[];
      exact: number[];
      repeated: number;
      skipped: string;
      berlin: string;
      tokyo: string;
    };
    expect(out.roundTrips).toEqual(out.roundTrips.map(() => true));
    // Only the later of each zone's repeated-hour instants is ambiguous (Berlin's and New
    // York's fall-back, Sydney's April one); Tokyo keeps no DST.
    expect(out.exact).toEqual([9, 9, 10, 9]);
    // The repeated 02:30 reads as the earlier one (summer time); the skipped 02:30 as 03:30.
    expect(out.repeated).toBe(0);
    expect(out.skipped).toBe("2026-03-29T03:30");
    expect(out.berlin).toBe("2030-01-15 6:05 PM · Jan 15, 2030 · Tuesday, January 15th, 2030");
    expect(out.tokyo).toBe("2030-01-16 2:05 AM");
  });

  it("suggests channels and people in the composer and shows the text Slack will send", async () => {
    await actAs(OMAR);
    await openPlace("C0EVENTS");
    const composer = page.locator('[data-testid="composer"]');
    const hints = page.locator('#main [data-testid="composer-hints"]');
    await composer.fill("");
    await composer.pressSequentially("/onair help #ev");
    await expect.poll(() => hints.locator(".hint").allTextContents()).toEqual(["#events"]);
    await hints.locator(".hint", { hasText: "#events" }).click();
    expect(await composer.inputValue()).toBe("/onair help #events ");
    await composer.pressSequentially("@ke");
    await expect
      .poll(() => hints.locator(".hint").allTextContents())
      .toEqual(["@kei (Kei Organizer)"]);
    await hints.locator(".hint").first().click();
    await composer.pressSequentially("Q&A");
    await expect
      .poll(() => page.locator('#main [data-testid="sends"]').textContent())
      .toBe("Slack sends: help <#C0EVENTS|events> <@U0KEI0ORG|kei> Q&amp;A");
    await composer.fill("");
    // Subcommands: each with its arguments and what it does.
    await composer.pressSequentially("/onair ed");
    await expect
      .poll(() => hints.locator(".hint").allTextContents())
      .toEqual(["/onair edit <event> — change an event you organize"]);
    await composer.fill("");
  });

  it("ends the event from the live panel: the attendance report lands in the card's thread", async () => {
    await actAs(OMAR);
    await openPlace("C0EVENTS");
    await page.selectOption('[data-testid="live-event"]', eventId);
    const log = page.locator('[data-testid="live-log"]');
    // A later NOT_STARTED for an instance that had begun: the instance ended.
    await page.click('[data-state="NOT_STARTED"]');
    await expect.poll(() => log.textContent()).toMatch(/NOT_STARTED → 1 webhook delivery/);
    await card().locator(".replies").click();
    const thread = page.locator('[data-testid="thread"]');
    // The chart inline and the CSV as a file, under the report's figures.
    await expect
      .poll(() => thread.locator('[data-testid="file-image"]').count(), { timeout: 20_000 })
      .toBe(1);
    await expect.poll(() => thread.locator('[data-testid="file"]').count()).toBe(1);
    await expect.poll(() => thread.textContent()).toMatch(/[Pp]eak/);
    await expect
      .poll(() =>
        thread
          .locator("img.file-image")
          .evaluate((img) => (img as { naturalWidth: number }).naturalWidth),
      )
      .toBeGreaterThan(0);
    await shot("13-attendance-report");

    // The card says the instance ended, when, and its final figures; so does the live panel.
    await expect
      .poll(() => card().textContent(), { timeout: 15_000 })
      .toMatch(/Ended .*Final figures: peak 32 · unique 33 · present at the end 30(?!\d)/);
    expect(await card().textContent()).not.toMatch(/Live now|Attendees now/);
    await page.click("#tab-live");
    await expect.poll(() => page.locator('[data-testid="live-state"]').textContent()).toBe("ENDED");
    await card().evaluate((el) => el.scrollIntoView({ block: "start" }));
    await shot("14-card-ended");
  });

  it("after a restart, events the sandbox kept stay live; one it lost is marked gone", async () => {
    // Restart on the same data/: the sandbox kept the event, so its card keeps its buttons.
    await restart();
    await actAs(OMAR);
    await openPlace("C0EVENTS");
    await expect.poll(() => card().locator(".bk-button", { hasText: "Edit" }).count()).toBe(1);
    await page.selectOption('[data-testid="live-event"]', eventId);
    const log = page.locator('[data-testid="live-log"]');
    await page.click('[data-state="IN_EVENT"]');
    await expect.poll(() => log.textContent()).toMatch(/IN_EVENT → 1 webhook delivery \(instance/);

    // Restart again, the sandbox's file gone (a fresh clone's sandbox, or one wiped): the app
    // finds at start that the service no longer has the event.
    await restart(() => rmSync(join(dir, SANDBOX_FILE), { force: true }));
    await openPlace("C0EVENTS");
    await expect
      .poll(() => card().textContent(), { timeout: 20_000 })
      .toMatch(/Gone — the live events service no longer has this event/);
    expect(await card().locator(".bk-button").count()).toBe(0);
    // Its reminders are deleted from Slack; the live panel says it is gone.
    await expect
      .poll(() => page.locator('[data-testid="scheduled-count"]').count(), { timeout: 15_000 })
      .toBe(0);
    await page.selectOption('[data-testid="live-event"]', eventId);
    await expect
      .poll(() => page.locator('[data-testid="live-state"]').textContent())
      .toMatch(/^GONE/);
    await shot("13-gone-card");
    // The cancel of a gone event says it is gone.
    await run(`/onair cancel ${eventId}`);
    const gone = page
      .locator('[data-testid="ephemeral"], [data-testid="modal"]')
      .filter({ hasText: "no longer has the event" });
    await expect.poll(() => gone.count(), { timeout: 10_000 }).toBeGreaterThan(0);
    expect(await gone.first().textContent()).not.toMatch(/link/);
    if ((await page.locator('[data-testid="modal"]').count()) > 0)
      await page.keyboard.press("Escape");
    // A drive of it fails, and the panel says so rather than showing it live.
    await page.click("#tab-live");
    await page.selectOption('[data-testid="live-event"]', eventId);
    await page.click('[data-state="IN_EVENT"]');
    await expect.poll(() => log.textContent()).toMatch(/no event/);
  }, 60_000);

  it("runs no script errors and leaks no secret", async () => {
    expect(pageErrors).toEqual([]);
    const scanner = createSecretScanner();
    for (const line of logs) scanner.add("log", line);
    scanner.add("page", await page.content());
    scanner.assertNoSecrets([...secrets, ...pg.secrets]);
  });
});

/** The scheduled event's card in #events (its header is the title). */
function card() {
  return page
    .locator('#feed [data-testid="message"]')
    .filter({ has: page.locator(".bk-header", { hasText: "Playground town hall" }) });
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
