import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Playground } from "../../src/playground/runtime.ts";
import { eventually, freePort, type SeededEvent, seedEvent } from "../helpers/live-fixtures.ts";
import { startTestPlayground } from "../helpers/playground.ts";

/**
 * The playground's Live tab through its JSON API, as the organizer drove it: Prep → In
 * event → a burst of 40, 7 leave → Not started. The report posts and every place the page shows
 * the state says the instance ended (its events list, the card in #events), still after a
 * restart; a restart mid-event keeps who is present for "Leave"; the event's panelists and
 * moderators can join by their e-mails; the global shortcut can be fired.
 */

const TEAM = "T0ONAIR";
const OMAR = "U0OMAR0ORG";
const EVENTS = "C0EVENTS";

let dir: string;
let port: number;
let pg: Playground;
const logs: string[] = [];

async function call(path: string, body?: unknown) {
  const res = await fetch(`${pg.app.origin}/playground/api/${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

interface PageEvent {
  eventId: string;
  state: string;
  present: number;
  peak: number;
  unique: number;
  endedAt: number | null;
}

async function pageEvent(eventId: string): Promise<PageEvent | undefined> {
  const r = await call("events");
  return (r.body.events as PageEvent[]).find((e) => e.eventId === eventId);
}

/** The card as the page shows #events to Omar. */
async function card(title: string): Promise<string> {
  const r = await call(`state?user=${OMAR}`);
  const channels = r.body.channels as Array<{ id: string; messages: unknown[] }>;
  const msgs = channels.find((c) => c.id === EVENTS)?.messages ?? [];
  const found = msgs.find((m) => JSON.stringify(m).includes(`"text":"${title}"`));
  return found ? JSON.stringify(found) : "";
}

async function seeded(
  title: string,
  people: { panelists?: string[]; moderators?: string[] } = {},
): Promise<SeededEvent> {
  const event = await seedEvent(pg.app.deps, { team: TEAM, organizer: OMAR, title, ...people });
  const r = await call("command", {
    user: OMAR,
    channel: EVENTS,
    text: `/onair notify ${event.eventId} #events`,
  });
  expect(r.status).toBe(200);
  await eventually(async () => ((await card(title)) ? true : undefined), "the card");
  return event;
}

async function drive(eventId: string, state: string): Promise<void> {
  const r = await call("control/state", { eventId, state });
  expect(r.status).toBe(200);
  const deliveries = r.body.deliveries as Array<{ ok: boolean }>;
  expect(
    deliveries.map((d) => d.ok),
    JSON.stringify(r.body),
  ).toEqual([true]);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "onair-pg-live-"));
  // One port across restarts: the sandbox's webhooks name it.
  port = await freePort();
  pg = await startTestPlayground(dir, logs, port);
});

afterAll(async () => {
  await pg?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the playground's Live tab", () => {
  it("after a restart mid-event, Leave takes real attendees; Not started ends the instance everywhere the page shows it, across a restart too", async () => {
    const title = "Playground all-hands";
    const event = await seeded(title);
    await drive(event.eventId, "PREP_EVENT");
    await drive(event.eventId, "IN_EVENT");
    const burst = await call("control/attendees", { eventId: event.eventId, count: 40 });
    expect(burst.body, JSON.stringify(burst.body)).toMatchObject({
      joined: 40,
      delivered: 40,
      activeAttendeeCount: 40,
    });
    await eventually(
      async () => ((await pageEvent(event.eventId))?.unique === 40 ? true : undefined),
      `40 on the page ${JSON.stringify(await pageEvent(event.eventId))}`,
    );

    // A restart mid-event: the page's server forgets, the sandbox keeps who is in.
    await pg.close();
    pg = await startTestPlayground(dir, logs, port);
    const left = await call("control/attendees", { eventId: event.eventId, leave: 7 });
    expect(left.body).toMatchObject({ left: 7, activeAttendeeCount: 33 });
    await eventually(
      async () => ((await pageEvent(event.eventId))?.present === 33 ? true : undefined),
      "33 present on the page",
      15_000,
    );
    expect(await pageEvent(event.eventId)).toMatchObject({ state: "IN_EVENT" });
    // The card follows the figures through the channel's pacer (a post a second), so it may lag
    // the page's figures by a post or two on a busy machine.
    expect(
      await eventually(
        async () => ((await card(title)).includes("Live now") ? true : undefined),
        "Live now on the card",
        15_000,
      ),
    ).toBe(true);

    await drive(event.eventId, "NOT_STARTED");
    const ended = await eventually(
      async () => {
        const e = await pageEvent(event.eventId);
        return e?.state === "ENDED" ? e : undefined;
      },
      "ENDED on the page",
      15_000,
    );
    expect(ended).toMatchObject({ present: 33, peak: 40, unique: 40 });
    expect(ended.endedAt).toBeGreaterThan(0);
    const endedCard = await eventually(
      async () => {
        const c = await card(title);
        return c.includes("Ended <!date^") ? c : undefined;
      },
      "the ended card",
      15_000,
    );
    expect(endedCard).not.toContain("Live now");
    expect(endedCard).toContain("present at the end *33*");

    await pg.close();
    pg = await startTestPlayground(dir, logs, port);
    expect((await pageEvent(event.eventId))?.state).toBe("ENDED");
    expect(await card(title)).toContain("Ended <!date^");
    expect(await card(title)).not.toContain("Live now");
  }, 120_000);

  it("the event's panelists join by their e-mails and the card names them; a role the event lacks is not shown", async () => {
    const title = "Playground panel";
    const event = await seeded(title, { panelists: ["kei@example.com"] });
    await drive(event.eventId, "PREP_EVENT");
    const noMods = await call("control/attendees", { eventId: event.eventId, role: "moderator" });
    expect(noMods.status).toBe(409);
    expect(String(noMods.body.error)).toMatch(/no moderators/);
    const r = await call("control/attendees", { eventId: event.eventId, role: "panelist" });
    expect(r.body).toMatchObject({ joined: 1 });
    const shown = await eventually(
      async () => {
        const c = await card(title);
        return /Panelists in:\* Kei/.test(c) ? c : undefined;
      },
      "Kei among the panelists in",
      15_000,
    );
    // Nobody was made a moderator: no "Moderators in: none yet", which would say nothing true.
    expect(shown).not.toContain("Moderators in");
  }, 60_000);

  it("fires the global shortcut, which opens the schedule form", async () => {
    const meta = await call("meta");
    const shortcuts = meta.body.shortcuts as Array<{ callback_id: string; name: string }>;
    expect(shortcuts.map((s) => s.callback_id)).toContain("schedule_event");
    const r = await call("shortcut", { user: OMAR, callback_id: "schedule_event" });
    expect(r.body).toMatchObject({ status: 200 });
    const modals = await eventually(async () => {
      const s = await call(`state?user=${OMAR}`);
      const m = s.body.modals as unknown[];
      return m.length > 0 ? m : undefined;
    }, "the schedule modal");
    expect(JSON.stringify(modals.at(-1))).toContain("Schedule");
    const bad = await call("shortcut", { user: OMAR });
    expect(bad.status).toBe(400);
  });
});
