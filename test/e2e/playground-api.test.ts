import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Playground } from "../../src/playground/runtime.ts";
import { startTestPlayground } from "../helpers/playground.ts";
import { createSecretScanner } from "../helpers/secrets.ts";

/** The page's JSON API against the real app in playground mode (no browser). */

const ADMIN = "U0ADA0ADMIN";
const MEMBER = "U0MIA0MEMBER";
const EVENTS = "C0EVENTS";

interface State {
  me: string;
  channels: {
    id: string;
    is_im: boolean;
    messages: { ts: string; text: string; user: string }[];
  }[];
  ephemerals: { channel: string; user: string; text: string }[];
  modals: unknown[];
}

let dir: string;
let pg: Playground;
const logs: string[] = [];

function start(): Promise<Playground> {
  return startTestPlayground(dir, logs);
}

async function call(path: string, body?: unknown, method = body === undefined ? "GET" : "POST") {
  const res = await fetch(`${pg.app.origin}/playground/api/${path}`, {
    method,
    headers: { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function state(user: string): Promise<State> {
  const r = await call(`state?user=${user}`);
  expect(r.status).toBe(200);
  return r.body as unknown as State;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "onair-pg-api-"));
  pg = await start();
});

afterAll(async () => {
  await pg?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("playground page API", () => {
  it("serves the page and its static files, and nothing outside the page folder", async () => {
    const page = await fetch(`${pg.app.origin}/playground`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("<title>On Air");
    const js = await fetch(`${pg.app.origin}/playground/static/blocks.js`);
    expect(js.headers.get("content-type")).toContain("text/javascript");
    // The view-state table and Slack's escaping come from the emulator package, byte for byte.
    for (const name of ["view-state.js", "slash-text.js"]) {
      const served = await fetch(`${pg.app.origin}/playground/static/${name}`);
      expect(served.headers.get("content-type")).toContain("text/javascript");
      const own = readFileSync(
        createRequire(import.meta.url).resolve(`@onair/slack-emulator/${name}`),
        "utf8",
      );
      expect(await served.text()).toBe(own);
    }
    for (const bad of ["..%2Fapi.ts", "%2e%2e/runtime.ts", "nope.js"]) {
      const r = await fetch(`${pg.app.origin}/playground/static/${bad}`);
      expect(r.status).toBe(404);
    }
  });

  it("runs a slash command signed like Slack; its ephemeral answer is shown to that user only", async () => {
    const r = await call("command", { user: ADMIN, channel: EVENTS, text: "/onair help" });
    expect(r).toMatchObject({ status: 200, body: { status: 200 } });
    // The answer comes after the ack (through the command's response_url): waited for.
    await expect
      .poll(async () =>
        (await state(ADMIN)).ephemerals.some(
          (e) => e.channel === EVENTS && /\/onair schedule/.test(e.text),
        ),
      )
      .toBe(true);
    const member = await state(MEMBER);
    expect(member.ephemerals).toEqual([]);
  });

  it("answers 304 to a poll when nothing changed", async () => {
    const first = await fetch(`${pg.app.origin}/playground/api/state?user=${ADMIN}`);
    const etag = first.headers.get("etag");
    expect(etag).toBeTruthy();
    await first.arrayBuffer();
    const again = await fetch(`${pg.app.origin}/playground/api/state?user=${ADMIN}`, {
      headers: { "if-none-match": etag as string },
    });
    expect(again.status).toBe(304);
  });

  it("lists the app's Slack calls by method and outcome, never their arguments", async () => {
    const r = await call("calls?since=0");
    expect(r.status).toBe(200);
    const calls = r.body.calls as Record<string, unknown>[];
    expect(calls.map((c) => c.method)).toContain("auth.test");
    const allowed = new Set([
      "seq",
      "method",
      "ok",
      "status",
      "time",
      "error",
      "channel",
      "messages",
    ]);
    for (const c of calls) for (const k of Object.keys(c)) expect(allowed.has(k)).toBe(true);
    const later = await call(`calls?since=${String(calls.at(-1)?.seq)}`);
    expect(later.body.calls).toEqual([]);
  });

  it("refuses bad input with a 4xx and a reason", async () => {
    const cases: [string, unknown, number, RegExp][] = [
      [
        "command",
        { user: "nobody", channel: EVENTS, text: "/onair" },
        400,
        /user: must be a Slack id/,
      ],
      ["command", { user: "U0NOSUCH", channel: EVENTS, text: "/onair" }, 404, /no person/],
      ["command", { user: ADMIN, channel: EVENTS, text: "help" }, 400, /starts with a slash/],
      ["command", { user: ADMIN, channel: EVENTS, text: "/onair", extra: 1 }, 400, /extra/],
      ["command", "{not json", 400, /not valid JSON/],
      ["submit", { user: ADMIN, view_id: "V0NOSUCHVIEW", values: {} }, 409, /no longer open/],
      ["control/attendees", { eventId: "e1" }, 400, /who joins/],
      ["control/faults", { service: "mail" }, 400, /service/],
      ["control/state", { eventId: "e1", state: "LIVE" }, 400, /state/],
      ["nope", {}, 404, /no API route/],
    ];
    for (const [path, body, status, reason] of cases) {
      const r = await call(path, body);
      expect({ path, status: r.status }).toEqual({ path, status });
      expect(String(r.body.error)).toMatch(reason);
    }
    const huge = await call("message", { user: ADMIN, channel: EVENTS, text: "x".repeat(70_000) });
    expect(huge.status).toBe(413);
    const get = await call("command");
    expect(get.status).toBe(405);
  });

  it("serves a shared file (the report's chart inline, the CSV as a download) and sends pasted join links to the app", async () => {
    const bot = pg.emulator.botToken;
    const api = async (method: string, args: Record<string, unknown>) => {
      const res = await fetch(`${pg.emulator.apiUrl}${method}`, {
        method: "POST",
        headers: { authorization: `Bearer ${bot}`, "content-type": "application/json" },
        body: JSON.stringify(args),
      });
      return (await res.json()) as Record<string, unknown>;
    };
    const bytes = Buffer.from("a,b\r\n1,2\r\n");
    const url = await api("files.getUploadURLExternal", {
      filename: "r.csv",
      length: bytes.length,
    });
    expect(url.ok).toBe(true);
    await fetch(String(url.upload_url), { method: "POST", body: bytes });
    const done = await api("files.completeUploadExternal", {
      files: [{ id: url.file_id, title: "Attendance (CSV)" }],
      channel_id: EVENTS,
    });
    expect(done.ok).toBe(true);
    await pg.emulator.sharesLanded();
    const file = await fetch(`${pg.app.origin}/playground/api/file?id=${String(url.file_id)}`);
    expect(file.status).toBe(200);
    expect(file.headers.get("content-disposition")).toContain("attachment");
    expect(await file.text()).toBe("a,b\r\n1,2\r\n");
    expect((await call("file?id=FNOPE")).status).toBe(404);
    const s = await state(ADMIN);
    const shared = s.channels
      .find((c) => c.id === EVENTS)
      ?.messages.find((m) => JSON.stringify(m).includes(String(url.file_id)));
    expect(shared).toBeDefined();

    const since = pg.emulator.driver.deliveries.length;
    const posted = await call("message", {
      user: ADMIN,
      channel: EVENTS,
      text: "join https://live.sandbox.example.com/12345",
    });
    expect(posted.status).toBe(200);
    const delivered = pg.emulator.driver.deliveries.slice(since);
    expect(delivered.map((d) => [d.status, d.acked])).toEqual([[200, true]]);
  });

  it("proxies the sandbox's control API and passes its refusals on", async () => {
    const r = await call("control/state", { eventId: "no-such-event", state: "IN_EVENT" });
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expect(String(r.body.error)).not.toBe("");
    const fault = await call("control/faults", { service: "events", status: 503, times: 1 });
    expect(fault.status).toBe(200);
    const cleared = await call("control/faults", undefined, "DELETE");
    expect(cleared.status).toBe(200);
  });

  it("keeps the workspace across a restart (messages and threads), not ephemerals", async () => {
    const posted = await call("message", {
      user: ADMIN,
      channel: EVENTS,
      text: "kept across restarts",
    });
    expect(posted.status).toBe(200);
    const ts = String(posted.body.ts);
    const reply = await call("message", {
      user: MEMBER,
      channel: EVENTS,
      text: "a reply",
      thread_ts: ts,
    });
    expect(reply.status).toBe(200);
    await pg.close();
    pg = await start();
    const s = await state(MEMBER);
    const events = s.channels.find((c) => c.id === EVENTS);
    const parent = events?.messages.find((m) => m.ts === ts);
    expect(parent?.text).toBe("kept across restarts");
    expect(events?.messages.some((m) => m.text === "a reply")).toBe(true);
    // Ephemeral messages are not kept (a Slack client forgets them; one may hold a token).
    expect((await state(ADMIN)).ephemerals).toEqual([]);
    // The page still drives the restarted app.
    const r = await call("command", { user: MEMBER, channel: EVENTS, text: "/onair help" });
    expect(r.status).toBe(200);
  });

  it("leaks no secret into the logs or the page's state", async () => {
    const scanner = createSecretScanner();
    for (const line of logs) scanner.add("log", line);
    for (const u of [ADMIN, MEMBER]) scanner.add(`state ${u}`, JSON.stringify(await state(u)));
    scanner.assertNoSecrets(pg.secrets);
  });
});
