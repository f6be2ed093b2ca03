import type { CallRecord } from "@onair/slack-emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENT_FIELDS as F, TOKEN_FIELDS as T, VIEWS } from "../../src/ids.ts";
import { RELAY_ERROR_CATALOG, type RelayErrorName } from "../../src/upstream/relay/catalog.ts";
import { commandOpensModal, future, HOUR, isMessageTo, waitFor } from "../e2e/organizer-helpers.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { createSecretScanner } from "../helpers/secrets.ts";
import { FULL, slice } from "./fault-helpers.ts";

/**
 * Upstream failures through the Slack surface: each relay catalog error while minting with
 * `/onair token`, and the events service's 4xx, 5xx and timeouts while scheduling. The user gets
 * one plain answer; nothing is half-done (no token shown, no event stored, no card posted).
 */

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ env: { LOG_LEVEL: "warn" } });
});
afterAll(async () => {
  await h?.close();
});

/** Plain words: no stack, no JSON, no raw error names from the runtime. */
function expectPlain(text: string): void {
  expect(text.length).toBeGreaterThan(10);
  expect(text).not.toMatch(/\bat .+:\d+:\d+|[{}]|undefined|\[object|ECONN|TypeError|stack/);
}

describe("every relay catalog error while minting a token", () => {
  const names = slice(Object.keys(RELAY_ERROR_CATALOG) as RelayErrorName[], 19);
  it(`reads as its own plain message (${names.length} of ${Object.keys(RELAY_ERROR_CATALOG).length} errors)`, async () => {
    const seen = new Set<string>();
    for (const name of names) {
      await commandOpensModal(h, USERS.admin, CHANNELS.general, "token", VIEWS.token);
      h.sandbox.control.addFault({ service: "relay", error: name, times: 10 });
      const since = h.emulator.calls.length;
      const res = await h.driver.viewSubmission({
        user: USERS.admin,
        values: { [T.duration]: "day" },
      });
      expect(res.status).toBe(200);
      const { userMessage } = RELAY_ERROR_CATALOG[name];
      // The form's own modal turns into the answer (only the requester sees it).
      const call: CallRecord = await waitFor(
        h,
        (c) => c.method === "views.update" && JSON.stringify(c.args.view).includes(userMessage),
        since,
      );
      h.sandbox.control.clearFaults();
      const blocks = (call.args.view as { blocks: Array<{ text?: { text?: string } }> }).blocks;
      const text = String(blocks[0]?.text?.text);
      expectPlain(text);
      expect(text, name).not.toMatch(/Your relay token/);
      seen.add(text);
    }
    // Each error has its own words.
    expect(seen.size).toBe(names.length);
  });
});

describe("events service failures while scheduling", () => {
  const cases: Array<{ label: string; fault: { status?: number; delayMs?: number } }> = [
    ...[400, 401, 403, 404, 409, 422, 429, 500, 502, 503, 504].map((status) => ({
      label: `HTTP ${status}`,
      fault: { status },
    })),
    // A real timeout needs the client's 20 s per-attempt deadline to pass: in the full run only.
    ...(FULL ? [{ label: "timeout", fault: { delayMs: 25_000 } }] : []),
  ];
  const picked = slice(cases, 6);

  it(`answer plainly and leave nothing half-done (${picked.map((c) => c.label).join(", ")})`, async () => {
    for (const { label, fault } of picked) {
      await commandOpensModal(h, USERS.omar, CHANNELS.general, "schedule", VIEWS.event);
      const before = (await h.app.store.events.list(TEAM)).length;
      const upstreamBefore = h.sandbox.control.log().length;
      h.sandbox.control.addFault({ service: "events", ...fault, times: 50 });
      const since = h.emulator.calls.length;
      const start = future(5);
      const res = await h.driver.viewSubmission({
        user: USERS.omar,
        values: {
          [F.title]: `Unlucky ${label}`,
          [F.start]: new Date(start),
          [F.end]: new Date(start + HOUR),
          [F.channel]: CHANNELS.events,
        },
      });
      expect(res.status, label).toBe(200);
      let text: string;
      if (res.outcome.action === "errors") {
        text = Object.values(res.outcome.errors).join(" ");
      } else {
        expect(res.outcome.action, label).toBe("closed");
        // The form comes back on the submission's own trigger with the reason on top (or,
        // where it cannot, a plain message says why).
        const call = await waitFor(
          h,
          (c) =>
            isMessageTo(USERS.omar, /./)(c) ||
            (c.method === "views.open" &&
              c.ok &&
              JSON.stringify(c.args).includes("Nothing was saved")),
          since,
          fault.delayMs ? 60_000 : 10_000,
        );
        text =
          call.method === "views.open"
            ? (/Nothing was saved:[^"]*/.exec(JSON.stringify(call.args.view))?.[0] ?? "")
            : String(call.args.text);
        if (call.method === "views.open") await h.driver.viewClosed({ user: USERS.omar });
      }
      h.sandbox.control.clearFaults();
      expectPlain(text);
      expect(text, label).not.toMatch(/Scheduled/);
      // Nothing half-done: no record, nothing created upstream, no card in the channel.
      expect((await h.app.store.events.list(TEAM)).length, label).toBe(before);
      const created = h.sandbox.control
        .log()
        .slice(upstreamBefore)
        .filter((e) => e.service === "events" && e.method === "POST" && e.status < 300)
        .filter((e) => /\/events$/.test(e.path));
      expect(created, label).toEqual([]);
      const cards = h.emulator.calls
        .slice(since)
        .filter((c) => c.method === "chat.postMessage" && c.args.channel === CHANNELS.events);
      expect(cards, label).toEqual([]);
    }
  }, 120_000);

  it("the same form then succeeds once the service is back", async () => {
    await commandOpensModal(h, USERS.omar, CHANNELS.general, "schedule", VIEWS.event);
    const since = h.emulator.calls.length;
    const start = future(6);
    const res = await h.driver.viewSubmission({
      user: USERS.omar,
      values: { [F.title]: "Lucky", [F.start]: new Date(start), [F.end]: new Date(start + HOUR) },
    });
    expect(res.outcome.action).toBe("closed");
    await waitFor(h, isMessageTo(USERS.omar, /Scheduled/), since);
  });

  it("leaks no secret", () => {
    const scan = createSecretScanner();
    for (const line of h.logs) scan.add("log", line);
    for (const c of h.emulator.calls) scan.add(`slack ${c.method}`, JSON.stringify(c));
    scan.assertNoSecrets([...h.secrets, "sandbox-secret"]);
  });
});
