import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENT_FIELDS as F, VIEWS } from "../../src/ids.ts";
import type { Playground } from "../../src/playground/runtime.ts";
import { startTestPlayground } from "../helpers/playground.ts";
import { createSecretScanner } from "../helpers/secrets.ts";

/**
 * The playground as an org with two workspaces and the app installed org-wide, through the
 * page's API: each person acts in their own workspace, and what is scheduled in one is listed
 * there and not in the other.
 */

const FIRST = "T0ONAIR";
const SECOND = "T0SECOND";
const OMAR = "U0OMAR0ORG"; // the first workspace
const SAM = "U0SAM0SECOND"; // the second
const EVENTS = "C0EVENTS"; // shared by both

interface Block {
  block_id?: string;
  element?: { type: string; action_id: string };
}
interface State {
  team: { id: string; name: string };
  workspaces: Array<{ id: string; name: string }>;
  users: Array<{ id: string; team_id: string; workspaces: string[] }>;
  channels: Array<{ id: string }>;
  ephemerals: Array<{ channel: string; text: string; blocks?: unknown }>;
  modals: Array<{ id: string; callback_id: string; blocks: Block[] }>;
  events: Array<{ eventId: string; title: string }>;
}

let dir: string;
let pg: Playground;
let browser: Browser | undefined;
const logs: string[] = [];

async function call(path: string, body?: unknown) {
  const res = await fetch(`${pg.app.origin}/playground/api/${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function state(user: string): Promise<State> {
  const r = await call(`state?user=${user}`);
  expect(r.status).toBe(200);
  return r.body as unknown as State;
}

/** The schedule form filled in and submitted through the page, as its modal would. */
async function schedule(user: string, title: string) {
  expect((await call("command", { user, channel: EVENTS, text: "/onair schedule" })).status).toBe(
    200,
  );
  let form: State["modals"][number] | undefined;
  await expect
    .poll(async () => {
      form = (await state(user)).modals.find(
        (m) => m.callback_id === VIEWS.event && m.blocks.some((b) => b.block_id === F.title),
      );
      return form !== undefined;
    })
    .toBe(true);
  const el = (blockId: string) => {
    const found = form?.blocks.find((b) => b.block_id === blockId)?.element;
    if (!found) throw new Error(`no ${blockId} in the form`);
    return found;
  };
  const start = Math.floor(Date.now() / 1000) + 4 * 3600;
  const pick = (blockId: string, sec: number) => {
    const e = el(blockId);
    expect(e.type).toBe("datetimepicker");
    return { [e.action_id]: { type: e.type, selected_date_time: sec } };
  };
  const title_ = el(F.title);
  const before = (await state(user)).ephemerals.length;
  const r = await call("submit", {
    user,
    view_id: form?.id,
    values: {
      [F.title]: { [title_.action_id]: { type: title_.type, value: title } },
      [F.start]: pick(F.start, start),
      [F.end]: pick(F.end, start + 3600),
    },
  });
  expect(r.body.outcome).toMatchObject({ action: "closed" });
  // The form closes first; the event is scheduled after, and the person told so. Waited for here,
  // or that answer could be taken for the next command's.
  await expect
    .poll(async () =>
      (await state(user)).ephemerals
        .slice(before)
        .some((e) => e.text?.startsWith(":white_check_mark: Scheduled.") && e.text.includes(title)),
    )
    .toBe(true);
}

/** The texts `/onair list` answers with: a list, or none to list. */
const LIST_ANSWER = /^(Your events \(\d+\)|You have no upcoming events)/;

/** What `/onair list` answered the person, run in the shared channel. */
async function listFor(user: string): Promise<string> {
  const before = (await state(user)).ephemerals.length;
  expect((await call("command", { user, channel: EVENTS, text: "/onair list" })).status).toBe(200);
  let answer = "";
  await expect
    .poll(async () => {
      // Only a list's answer: another message to the person (a schedule's) is not this one.
      const found = (await state(user)).ephemerals
        .slice(before)
        .filter((e) => LIST_ANSWER.test(e.text ?? ""));
      expect(found.length).toBeLessThanOrEqual(1);
      answer = found[0] ? JSON.stringify(found[0]) : "";
      return answer !== "";
    })
    .toBe(true);
  return answer;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "onair-pg-org-"));
  pg = await startTestPlayground(dir, logs, 0, { org: true });
});

afterAll(async () => {
  await browser?.close();
  await pg?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the playground as an org with two workspaces", () => {
  it("shows each person their own workspace: its people, its channels and the shared ones", async () => {
    const omar = await state(OMAR);
    const sam = await state(SAM);
    expect(omar.workspaces.map((w) => w.id)).toEqual([FIRST, SECOND]);
    expect(omar.team.id).toBe(FIRST);
    expect(sam.team).toEqual({ id: SECOND, name: "Second Workspace" });
    expect(sam.users.find((u) => u.id === SAM)?.team_id).toBe(SECOND);
    const ids = (s: State) => s.channels.map((c) => c.id);
    expect(ids(sam)).toEqual(expect.arrayContaining(["C0GENERAL", EVENTS, "C0SECONDHALL"]));
    expect(ids(sam)).not.toContain("C0TOWNHALL");
    expect(ids(omar)).toEqual(expect.arrayContaining(["C0GENERAL", EVENTS, "C0TOWNHALL"]));
    expect(ids(omar)).not.toContain("C0SECONDHALL");
  });

  it("lists an event scheduled in one workspace there, and not in the other", async () => {
    await schedule(OMAR, "First workspace all-hands");
    await expect
      .poll(async () => (await state(OMAR)).events.map((e) => e.title))
      .toContain("First workspace all-hands");
    expect((await state(SAM)).events).toEqual([]);
    expect(await listFor(OMAR)).toContain("First workspace all-hands");
    expect(await listFor(SAM)).not.toContain("First workspace all-hands");

    await schedule(SAM, "Second workspace town hall");
    await expect
      .poll(async () => (await state(SAM)).events.map((e) => e.title))
      .toEqual(["Second workspace town hall"]);
    expect(await listFor(SAM)).toContain("Second workspace town hall");
    expect(await listFor(OMAR)).not.toContain("Second workspace town hall");
    // Under each workspace's own team id, never the enterprise's.
    const titles = async (team: string) =>
      (await pg.app.store.events.list(team)).map((r) => r.title);
    expect(await titles(FIRST)).toEqual(["First workspace all-hands"]);
    expect(await titles(SECOND)).toEqual(["Second workspace town hall"]);
    expect(await titles("E0ONAIRORG")).toEqual([]);
    // The live panel's list: the named person's workspace, the first without one.
    const listed = async (q: string) =>
      ((await call(`events${q}`)).body.events as State["events"]).map((e) => e.title);
    expect(await listed(`?user=${SAM}`)).toEqual(["Second workspace town hall"]);
    expect(await listed("")).toEqual(["First workspace all-hands"]);
  });

  it("a member of both workspaces lists in each what they scheduled there", async () => {
    expect((await state(OMAR)).users.find((u) => u.id === OMAR)).toMatchObject({
      team_id: FIRST,
      workspaces: [FIRST, SECOND],
    });
    const move = (team: string) => call("workspace", { user: OMAR, team });
    expect(await move(SECOND)).toEqual({ status: 200, body: { team: SECOND } });
    const there = await state(OMAR);
    expect(there.team.id).toBe(SECOND);
    expect(there.channels.map((c) => c.id)).toContain("C0SECONDHALL");
    expect(there.events.map((e) => e.title)).toEqual(["Second workspace town hall"]);
    // Scheduled in the first workspace, it is not his in the second.
    expect(await listFor(OMAR)).not.toContain("First workspace all-hands");
    await schedule(OMAR, "Omar's second-workspace demo");
    expect(await listFor(OMAR)).toContain("Omar's second-workspace demo");

    expect((await move(FIRST)).status).toBe(200);
    const home = await listFor(OMAR);
    expect(home).toContain("First workspace all-hands");
    expect(home).not.toContain("Omar's second-workspace demo");
    expect((await pg.app.store.events.list(SECOND)).map((r) => r.title).sort()).toEqual([
      "Omar's second-workspace demo",
      "Second workspace town hall",
    ]);
  });

  it("moves no one to a workspace they are not a member of", async () => {
    expect(await call("workspace", { user: SAM, team: FIRST })).toEqual({
      status: 409,
      body: { error: `${SAM} is not a member of workspace ${FIRST}` },
    });
    expect((await state(SAM)).team.id).toBe(SECOND);
  });

  it("turns away a live-panel drive for a workspace the org does not have", async () => {
    const r = await call("control/attendees", { eventId: "x", team: "T0NOWHERE", join: ["A"] });
    expect(r).toEqual({ status: 404, body: { error: "no workspace T0NOWHERE here" } });
  });

  it("switches workspace on the page: the same person, the other workspace's channels and list", async () => {
    browser = await chromium.launch({
      executablePath: "/usr/bin/chromium",
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    });
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.setDefaultTimeout(10_000);
    await page.goto(pg.url);
    await page.selectOption('[data-testid="acting-user"]', OMAR);
    const pick = page.locator('[data-testid="workspace"]');
    await expect.poll(() => pick.inputValue()).toBe(FIRST);
    expect(await page.locator("#workspace-pick").isVisible()).toBe(true);
    const acting = async () =>
      page
        .locator('[data-testid="acting-user"] option')
        .evaluateAll((os) => os.map((o) => (o as unknown as { value: string }).value));
    expect(await acting()).not.toContain(SAM);

    const listed = async (title: string) => {
      await page.locator(`[data-place="${EVENTS}"]`).click();
      const before = await page.locator('[data-testid="ephemeral"]').count();
      const composer = page.locator('[data-testid="composer"]');
      await composer.fill("/onair list");
      await composer.press("Enter");
      const answers = page.locator('[data-testid="ephemeral"]');
      await expect.poll(() => answers.count()).toBeGreaterThan(before);
      return (await answers.last().textContent())?.includes(title);
    };
    await page.selectOption('[data-testid="workspace"]', SECOND);
    await expect.poll(() => page.locator("#team").textContent()).toBe("Second Workspace");
    expect(await page.locator('[data-testid="acting-user"]').inputValue()).toBe(OMAR);
    expect(await acting()).toEqual(expect.arrayContaining([OMAR, SAM]));
    await expect.poll(() => page.locator('[data-place="C0SECONDHALL"]').count()).toBe(1);
    expect(await page.locator('[data-place="C0TOWNHALL"]').count()).toBe(0);
    expect(await listed("First workspace all-hands")).toBe(false);

    await page.selectOption('[data-testid="workspace"]', FIRST);
    await expect.poll(() => page.locator("#team").textContent()).toBe("On Air Playground");
    expect(await listed("First workspace all-hands")).toBe(true);
  });

  it("leaves no secret in the logs", () => {
    const scanner = createSecretScanner();
    scanner.add("log", logs.join(""));
    expect(scanner.findLeaks(pg.secrets)).toEqual([]);
  });
});

describe("the org on a data directory a one-workspace run saved", () => {
  it("puts the second workspace's people back in the shared channels", async () => {
    const here = mkdtempSync(join(tmpdir(), "onair-pg-org-saved-"));
    const more: string[] = [];
    try {
      const single = await startTestPlayground(here, more);
      await single.close();
      const orgRun = await startTestPlayground(here, more, 0, { org: true });
      try {
        const events = orgRun.emulator.workspace.channels.get(EVENTS);
        expect(events?.members.has(SAM)).toBe(true);
        expect(events?.members.has("U0SIA0SECOND")).toBe(true);
        // Their own channel came with the org's seed.
        expect(orgRun.emulator.workspace.channels.get("C0SECONDHALL")?.members.has(SAM)).toBe(true);
      } finally {
        await orgRun.close();
      }
    } finally {
      rmSync(here, { recursive: true, force: true });
    }
  });
});
