import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENT_FIELDS as F, TOKEN_FIELDS as T, VIEWS } from "../../src/ids.ts";
import { future, HOUR, viewOf } from "../e2e/organizer-helpers.ts";
import { CHANNELS, type Harness, startHarness, USERS } from "../helpers/app-harness.ts";
import { createSecretScanner } from "../helpers/secrets.ts";
import { FULL, SEED } from "./fault-helpers.ts";

/**
 * Property-based fuzzing of the schedule and token forms: arbitrary strings in every text
 * input (past Slack's own client checks too) → an inline error or success, always acknowledged
 * in time, never a 5xx, a broken view or a crash.
 *
 * Within Slack's limits (the emulator's are on), as a person uses the forms: values answered
 * with inline errors are typed again into the same open form (Slack keeps it open), a new form
 * is opened only once one has closed, and a minted token is read before its modal is closed.
 * Slack counts its limits per workspace (tier 4, 100 a minute, for views.open and
 * views.update): each form has workspaces of its own, and a mint costs three tier-4 calls (the
 * form's open and fill, the token shown), so the token form's runs take turns across three.
 */

const anyText = fc.oneof(
  fc.string({ maxLength: 300 }),
  fc.string({ unit: "grapheme", maxLength: 80 }),
  fc.constantFrom("", " ", "<!channel>", "*bold*", "<https://x.example|x>", "\u0000", "0", "-1"),
  fc.string({ minLength: 3_001, maxLength: 3_500 }),
);

const ACCEPTED = ["errors", "closed", "updated"];

/** One workspace and app for a form's fuzz, and whether that form is open now. */
function fuzzHarness() {
  const ctx = { h: undefined as unknown as Harness, open: false };
  beforeAll(async () => {
    ctx.h = await startHarness({ env: { LOG_LEVEL: "warn" } });
  });
  afterAll(async () => {
    await ctx.h?.close();
  });
  return ctx;
}

/** Opens the form by its slash command unless it is open already; it must fill in. */
async function ensureForm(
  ctx: { h: Harness; open: boolean },
  user: string,
  text: string,
  callbackId: string,
): Promise<void> {
  if (ctx.open) return;
  const since = ctx.h.emulator.calls.length;
  await ctx.h.driver.slashCommand({ user, channel: CHANNELS.general, text });
  const filled = await ctx.h.emulator.waitForCall(
    (c) => c.method === "views.update" && viewOf(c).callback_id === callbackId,
    { since, timeoutMs: 5_000 },
  );
  expect(filled.ok, `views.update: ${filled.error ?? ""}`).toBe(true);
  ctx.open = true;
}

/** Everything the fuzz made Slack do was within its limits: no call refused with a 429. */
function expectWithinLimits(h: Harness): void {
  const limited = h.emulator.calls.filter((c) => c.status === 429).map((c) => c.method);
  expect(limited).toEqual([]);
}

function expectNoSecrets(h: Harness): void {
  const scan = createSecretScanner();
  for (const line of h.logs) scan.add("log", line);
  for (const c of h.emulator.calls) {
    // The requester's own token modal (or DM) is the one place a minted token may appear.
    if (c.method === "chat.postEphemeral") continue;
    scan.add(`slack ${c.method}`, JSON.stringify(c));
  }
  scan.assertNoSecrets([...h.secrets, "sandbox-secret"]);
}

describe("fuzzed schedule form", () => {
  const ctx = fuzzHarness();
  const seen = new Set<string>();

  it("inline errors or success, never a 5xx or a missed ack", async () => {
    const { h } = ctx;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          title: anyText,
          description: anyText,
          panelistMessage: anyText,
          attendeeMessage: anyText,
          startDays: fc.integer({ min: -3, max: 400 }),
          lengthH: fc.integer({ min: -2, max: 30 }),
        }),
        async (v) => {
          await ensureForm(ctx, USERS.omar, "schedule", VIEWS.event);
          const start = future(v.startDays);
          const res = await h.driver.viewSubmission({
            user: USERS.omar,
            clientValidation: false,
            values: {
              [F.title]: v.title,
              [F.start]: new Date(start),
              [F.end]: new Date(start + v.lengthH * HOUR),
              [F.description]: v.description,
              [F.panelistMessage]: v.panelistMessage,
              [F.attendeeMessage]: v.attendeeMessage,
            },
          });
          expect(res.status).toBe(200);
          expect(ACCEPTED, JSON.stringify(res.outcome)).toContain(res.outcome.action);
          seen.add(res.outcome.action);
          if (res.outcome.action === "errors") return;
          ctx.open = false;
          if (res.outcome.action !== "closed") await h.driver.viewClosed({ user: USERS.omar });
        },
      ),
      { seed: SEED, numRuns: FULL ? 200 : 20 },
    );
    expect([...seen].sort()).toEqual(["closed", "errors"]);
  });

  it("stayed within Slack's rate limits and leaked no secret", () => {
    expectWithinLimits(ctx.h);
    expectNoSecrets(ctx.h);
  });
});

describe("fuzzed token form", () => {
  const workspaces = [fuzzHarness(), fuzzHarness(), fuzzHarness()];
  const seen = new Set<string>();
  let turn = 0;

  it("inline errors or success, never a 5xx or a missed ack", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          // "never" is not offered by the default policy and "bogus" never is: both are sent as a
          // forged state, as a client that skipped Slack's own checks would.
          duration: fc.constantFrom("day", "custom", "twoWeeks", "never", "bogus"),
          customHours: anyText,
          clientName: anyText,
          pairingCode: fc.oneof(anyText, fc.constant(undefined)),
        }),
        async (v) => {
          const ctx = workspaces[turn++ % workspaces.length] as (typeof workspaces)[number];
          const { h } = ctx;
          await ensureForm(ctx, USERS.admin, "token", VIEWS.token);
          const since = h.emulator.calls.length;
          const res = await h.driver.viewSubmission({
            user: USERS.admin,
            clientValidation: false,
            values: {
              [T.duration]: ["day", "custom", "twoWeeks"].includes(v.duration)
                ? v.duration
                : { type: "radio_buttons", selected_option: { value: v.duration } },
              [T.customHours]: v.customHours,
              [T.clientName]: v.clientName,
              ...(v.pairingCode === undefined ? {} : { [T.pairingCode]: v.pairingCode }),
            },
          });
          expect(res.status).toBe(200);
          expect(ACCEPTED, JSON.stringify(res.outcome)).toContain(res.outcome.action);
          seen.add(res.outcome.action);
          if (res.outcome.action === "errors") return;
          ctx.open = false;
          if (res.outcome.action === "updated") {
            // "Minting…": the token (or why not) replaces it in the same modal; read, then closed.
            const id = (res.outcome.view as { id?: string }).id;
            await h.emulator.waitForCall(
              (c) => c.method === "views.update" && c.args.view_id === id,
              { since, timeoutMs: 10_000 },
            );
            await h.driver.viewClosed({ user: USERS.admin });
          }
        },
      ),
      { seed: SEED, numRuns: FULL ? 200 : 20 },
    );
    expect(seen.has("errors")).toBe(true);
    expect(seen.has("updated")).toBe(true);
    for (const { h } of workspaces) {
      const health = await fetch(`${h.app.origin}/healthz`);
      expect(health.status).toBe(200);
    }
  });

  it("stayed within Slack's rate limits and leaked no secret", () => {
    for (const { h } of workspaces) {
      expectWithinLimits(h);
      expectNoSecrets(h);
    }
  });
});
