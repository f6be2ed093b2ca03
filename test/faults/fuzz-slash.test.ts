import type { CallRecord } from "@onair/slack-emulator";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SUBCOMMANDS } from "../../src/ids.ts";
import { CHANNELS, type Harness, startHarness, USERS } from "../helpers/app-harness.ts";
import { createSecretScanner } from "../helpers/secrets.ts";
import { FULL, SEED } from "./fault-helpers.ts";

/**
 * Property-based fuzzing of `/onair` text: whatever follows the command, Slack gets an ack
 * (200, in time) and the user gets an answer meant for them alone (an ephemeral reply through
 * response_url or chat.postEphemeral, or a modal), never a crash or a 5xx.
 */

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ env: { LOG_LEVEL: "warn" } });
});
afterAll(async () => {
  await h?.close();
});

function answersUser(user: string) {
  return (c: CallRecord) =>
    c.method === "response_url" ||
    c.method === "views.open" ||
    (c.method === "chat.postEphemeral" && c.args.user === user);
}

/** Text a person could type: subcommands with odd arguments, markup, control characters. */
const text = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.string({ unit: "grapheme", maxLength: 100 }),
  fc
    .tuple(fc.constantFrom(...SUBCOMMANDS), fc.string({ maxLength: 120 }))
    .map(([s, a]) => `${s} ${a}`),
  fc
    .tuple(
      fc.constantFrom(...SUBCOMMANDS, "HELP", "Schedule"),
      fc.constantFrom(
        "<#C0EVENTS|events>",
        "<@U0KEI0ORG>",
        "<!channel>",
        "`x`",
        "*",
        "\u0000",
        "\n",
      ),
      fc.string({ maxLength: 40 }),
    )
    .map((p) => p.join(" ")),
  fc.string({ minLength: 3_000, maxLength: 4_000 }),
);

describe("fuzzed slash command text", () => {
  it("any text: an ack and an answer to the user alone, never a 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(USERS.omar, USERS.member, USERS.admin),
        text,
        async (user, input) => {
          const since = h.emulator.calls.length;
          const res = await h.driver.slashCommand({ user, channel: CHANNELS.general, text: input });
          expect(res.status).toBe(200);
          const answer = await h.emulator.waitForCall(answersUser(user), {
            since,
            timeoutMs: 10_000,
          });
          if (answer.method === "views.open") {
            await h.driver.viewClosed({ user });
          } else {
            expect(String(answer.args.text ?? "").length).toBeGreaterThan(0);
            // Ephemeral: response_url answers go to the user alone unless told otherwise.
            expect(answer.args.response_type ?? "ephemeral").toBe("ephemeral");
          }
        },
      ),
      { seed: SEED, numRuns: FULL ? 400 : 40 },
    );
    // Nothing went to a channel for everyone to see.
    const broadcast = h.emulator.calls.filter(
      (c) => c.method === "chat.postMessage" && String(c.args.channel).startsWith("C"),
    );
    expect(broadcast).toEqual([]);
    const health = await fetch(`${h.app.origin}/healthz`);
    expect(health.status).toBe(200);
    const scan = createSecretScanner();
    for (const line of h.logs) scan.add("log", line);
    for (const c of h.emulator.calls) scan.add(`slack ${c.method}`, JSON.stringify(c));
    scan.assertNoSecrets([...h.secrets, "sandbox-secret"]);
  });
});
