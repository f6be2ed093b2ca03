import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENT_FIELDS as F, TOKEN_FIELDS as T, VIEWS } from "../../src/ids.ts";
import { commandOpensModal, future, HOUR } from "../e2e/organizer-helpers.ts";
import { CHANNELS, type Harness, startHarness, USERS } from "../helpers/app-harness.ts";
import { createSecretScanner } from "../helpers/secrets.ts";
import { FULL, SEED } from "./fault-helpers.ts";

/**
 * Property-based fuzzing of the schedule and token forms: arbitrary strings in every text
 * input (past Slack's own client checks too) → an inline error or success, always acknowledged
 * in time, never a 5xx, a broken view or a crash.
 */

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ env: { LOG_LEVEL: "warn" } });
});
afterAll(async () => {
  await h?.close();
});

const anyText = fc.oneof(
  fc.string({ maxLength: 300 }),
  fc.string({ unit: "grapheme", maxLength: 80 }),
  fc.constantFrom("", " ", "<!channel>", "*bold*", "<https://x.example|x>", "\u0000", "0", "-1"),
  fc.string({ minLength: 3_001, maxLength: 3_500 }),
);

const ACCEPTED = ["errors", "closed", "updated"];
/** What the forms answered, so the suite shows it reached both inline errors and success. */
const seen = { schedule: new Set<string>(), token: new Set<string>() };

describe("fuzzed modal values", () => {
  it("schedule form: inline errors or success, never a 5xx or a missed ack", async () => {
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
          await commandOpensModal(h, USERS.omar, CHANNELS.general, "schedule", VIEWS.event);
          const start = future(v.startDays);
          const res = await h.driver.viewSubmission({
            user: USERS.omar,
            clientValidation: false,
            values: {
              [F.title]: v.title,
              [F.description]: v.description,
              [F.panelistMessage]: v.panelistMessage,
              [F.attendeeMessage]: v.attendeeMessage,
              [F.start]: new Date(start),
              [F.end]: new Date(start + v.lengthH * HOUR),
            },
          });
          expect(res.status).toBe(200);
          expect(ACCEPTED, JSON.stringify(res.outcome)).toContain(res.outcome.action);
          seen.schedule.add(res.outcome.action);
          if (res.outcome.action !== "closed") await h.driver.viewClosed({ user: USERS.omar });
        },
      ),
      { seed: SEED, numRuns: FULL ? 200 : 20 },
    );
    expect([...seen.schedule].sort()).toEqual(["closed", "errors"]);
  });

  it("token form: inline errors or success, never a 5xx or a missed ack", async () => {
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
          await commandOpensModal(h, USERS.admin, CHANNELS.general, "token", VIEWS.token);
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
          seen.token.add(res.outcome.action);
          if (res.outcome.action !== "closed") await h.driver.viewClosed({ user: USERS.admin });
        },
      ),
      { seed: SEED, numRuns: FULL ? 200 : 20 },
    );
    expect(seen.token.has("errors")).toBe(true);
    const health = await fetch(`${h.app.origin}/healthz`);
    expect(health.status).toBe(200);
  });

  it("no secret leaked while fuzzing", () => {
    const scan = createSecretScanner();
    for (const line of h.logs) scan.add("log", line);
    for (const c of h.emulator.calls) {
      // The requester's own ephemeral message is the one place a minted token may appear.
      if (c.method === "chat.postEphemeral") continue;
      scan.add(`slack ${c.method}`, JSON.stringify(c));
    }
    scan.assertNoSecrets([...h.secrets, "sandbox-secret"]);
  });
});
