import fc from "fast-check";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhookMessageSchema } from "../../src/upstream/events/schemas.ts";
import { CHANNELS, type Harness, startHarness } from "../helpers/app-harness.ts";
import { eventually } from "../helpers/live-fixtures.ts";
import { FULL, SEED, subscribeForTest } from "./fault-helpers.ts";

/**
 * Property-based fuzzing of the live webhook route with real HTTP: whatever the body, the route
 * answers 2xx or 4xx (never 5xx), the process keeps serving, and an invalid body posts nothing.
 */

let h: Harness;
type Target = { eventId: string; url: string; headers: Record<string, string> };
let target: Target;
/** A second event whose route only ever gets invalid bodies: its channel must stay quiet. */
let quietTarget: Target;

beforeAll(async () => {
  h = await startHarness({ env: { LOG_LEVEL: "warn" } });
  target = await subscribeForTest(h, "Fuzzed webhook", CHANNELS.townHall);
  quietTarget = await subscribeForTest(h, "Fuzzed quietly", CHANNELS.general);
  // The quiet event's card is posted by the engine, after the subscription: up before the test
  // counts the channel's calls (on a loaded machine it was not, a second later).
  await eventually(
    () => (slackCallsTo(CHANNELS.general) > 0 ? true : undefined),
    "the quiet event's card",
    20_000,
  );
});
afterAll(async () => {
  await h?.close();
});

async function post(body: string | Buffer, to: Target = target) {
  const res = await request(to.url, {
    method: "POST",
    body,
    headers: { "content-type": "application/json", ...to.headers },
  });
  await res.body.dump();
  return res.statusCode;
}

/** Posts and updates in the channel (the reminders the engine schedules there are not posts). */
const slackCallsTo = (channel: string) =>
  h.emulator.calls.filter(
    (c) =>
      c.args.channel === channel && (c.method === "chat.postMessage" || c.method === "chat.update"),
  ).length;

/** Near-valid messages: the right shape with any field replaced by anything. */
const nearValid = fc
  .record({
    eventId: fc.oneof(fc.constant("EVENT"), fc.string(), fc.integer(), fc.constant(null)),
    instanceId: fc.oneof(fc.string(), fc.integer(), fc.constant(undefined)),
    type: fc.oneof(
      fc.constantFrom("ATTENDEE_INFO", "EVENT_STATE", "attendee_info", ""),
      fc.string(),
    ),
    info: fc.oneof(
      fc.record({
        endpointGuid: fc.oneof(fc.string(), fc.integer()),
        infoType: fc.oneof(fc.constantFrom("JOIN", "LEFT", "join"), fc.string()),
        joinTime: fc.oneof(fc.integer(), fc.double(), fc.string()),
        name: fc.oneof(fc.string({ maxLength: 300 }), fc.constant(undefined)),
        email: fc.oneof(fc.emailAddress(), fc.string(), fc.constant(undefined)),
      }),
      fc.anything(),
    ),
    state: fc.oneof(fc.constantFrom("IN_EVENT", "PREP_EVENT", "NOT_STARTED"), fc.string()),
  })
  .map((m) => ({ ...m, eventId: m.eventId === "EVENT" ? target.eventId : m.eventId }));

describe("fuzzed webhook bodies", () => {
  it("any body: 2xx or 4xx, never 5xx; an invalid body posts nothing", async () => {
    let invalid = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.json().map((s) => ({ raw: s })),
          fc.anything().map((v) => ({ raw: JSON.stringify(v) ?? "null" })),
          fc.uint8Array({ maxLength: 2048 }).map((b) => ({ raw: Buffer.from(b) })),
          nearValid.map((m) => ({ raw: JSON.stringify(m) })),
        ),
        async ({ raw }) => {
          const status = await post(raw);
          expect(status).toBeGreaterThanOrEqual(200);
          expect(status).toBeLessThan(500);
          let parsed: unknown;
          try {
            parsed = JSON.parse(Buffer.isBuffer(raw) ? raw.toString("utf8") : raw);
          } catch {
            parsed = undefined;
          }
          const valid =
            parsed !== undefined &&
            webhookMessageSchema.safeParse(parsed).success &&
            (parsed as { eventId?: unknown }).eventId === target.eventId;
          if (!valid) {
            invalid++;
            expect(status, "an invalid body is refused").toBeGreaterThanOrEqual(400);
          }
        },
      ),
      { seed: SEED, numRuns: FULL ? 2_000 : 150 },
    );
    expect(invalid).toBeGreaterThan(0);
    // Valid bodies fast-check built above may post; "nothing posted" is checked on a second
    // event's route that gets invalid bodies alone (its card is already up).
    const quiet = slackCallsTo(CHANNELS.general);
    expect(quiet).toBeGreaterThan(0);
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.uint8Array({ maxLength: 512 }).map((b) => Buffer.from(b)),
          nearValid
            .filter((m) => !webhookMessageSchema.safeParse(m).success)
            .map((m) => JSON.stringify(m)),
        ),
        async (raw) => {
          let parsed: unknown;
          try {
            parsed = JSON.parse(Buffer.isBuffer(raw) ? raw.toString("utf8") : raw);
          } catch {
            parsed = undefined;
          }
          fc.pre(parsed === undefined || !webhookMessageSchema.safeParse(parsed).success);
          const status = await post(raw, quietTarget);
          expect(status).toBe(400);
        },
      ),
      { seed: SEED, numRuns: FULL ? 1_000 : 100 },
    );
    // The worker runs on its own pace; give it time to post anything it wrongly took in.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(slackCallsTo(CHANNELS.general)).toBe(quiet);
  });

  it("wrong headers, methods and sizes are 4xx; the route still serves afterwards", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          secret: fc.oneof(fc.string(), fc.constant(undefined)),
          contentType: fc.constantFrom("text/plain", "application/xml", "", "application/json"),
          method: fc.constantFrom("POST", "PUT", "GET", "DELETE", "PATCH"),
        }),
        async ({ secret, contentType, method }) => {
          const headers: Record<string, string> = { "content-type": contentType };
          if (secret !== undefined) headers["x-onair-secret"] = secret;
          const res = await request(target.url, {
            method,
            headers,
            ...(method === "GET" ? {} : { body: "{}" }),
          });
          await res.body.dump();
          expect(res.statusCode).toBeGreaterThanOrEqual(400);
          expect(res.statusCode).toBeLessThan(500);
        },
      ),
      { seed: SEED, numRuns: FULL ? 500 : 60 },
    );
    // Over the limit: refused with 413, not read whole.
    expect(await post(Buffer.alloc(200 * 1024, 0x20))).toBe(413);
    // Still up: a valid message is stored and acknowledged.
    const ok = await post(
      JSON.stringify({
        eventId: target.eventId,
        instanceId: "inst-fuzz",
        type: "ATTENDEE_INFO",
        info: {
          endpointGuid: "guid-after-fuzz",
          endpointType: "browser",
          infoType: "JOIN",
          joinTime: Date.now(),
          name: "After Fuzz",
        },
      }),
    );
    expect(ok).toBe(204);
  });
});
