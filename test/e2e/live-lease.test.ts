import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { notifyCard } from "../helpers/live-card.ts";
import { digestTotals, eventually, seedEvent } from "../helpers/live-fixtures.ts";

/**
 * On a shared store an event's owner holds a lease and extends it as it goes. Slack answering
 * slowly (a call outlasting half the lease) must not cost the lease: a lost lease means the
 * event is let go and taken up again with a fresh recovery, which on a busy shared deployment
 * is how digests fall behind.
 */

const REDIS = process.env.TEST_REDIS_URL;
const required = process.env.ONAIR_REQUIRE_SERVICES === "1";
const LEASE_MS = 1_200;

describe.skipIf(!REDIS && !required)("the owner's lease on a shared store", () => {
  let h: Harness;
  beforeAll(async () => {
    if (!REDIS) throw new Error("TEST_REDIS_URL is required (ONAIR_REQUIRE_SERVICES=1)");
    h = await startHarness({
      storeUrl: REDIS,
      storeNamespace: `lease-${randomUUID().slice(0, 8)}`,
      liveEngine: "inline",
      liveOptions: { leaseMs: LEASE_MS, paceMs: 300, digestEveryMs: 300 },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("is kept while Slack answers slower than half the lease", async () => {
    const event = await seedEvent(h.app.deps, {
      team: TEAM,
      organizer: USERS.omar,
      title: "Slow Slack all hands",
    });
    const ts = await notifyCard(h, event, CHANNELS.events, "digest");
    await h.sandbox.control.setState(event.eventId, { state: "IN_EVENT" });
    // Every post and update from here is answered 0.9 s late: 3/4 of the lease.
    const late = { times: 1_000, ms: 900 };
    h.emulator.slow({ ...late, method: "chat.update" });
    h.emulator.slow({ ...late, method: "chat.postMessage" });
    const since = h.emulator.calls.length;
    let joined = 0;
    for (let wave = 0; wave < 8; wave++) {
      const res = await h.sandbox.control.attendees(event.eventId, { count: 5 });
      expect(res.delivered).toBe(5);
      joined += 5;
      await new Promise((r) => setTimeout(r, 500));
    }
    const thread = () =>
      h.emulator.workspace
        .replies(CHANNELS.events, ts)
        .filter((m) => m.ts !== ts)
        .map((m) => m.text ?? "");
    await eventually(
      () => (digestTotals(thread()).joined >= joined ? true : undefined),
      "every join in the digests",
      30_000,
    );
    expect(digestTotals(thread())).toEqual({ joined, left: 0 });
    const slowCalls = h.emulator.calls
      .slice(since)
      .filter((c) => c.method === "chat.update" || c.method === "chat.postMessage");
    expect(slowCalls.length).toBeGreaterThan(4);
    // Never let go: no lost lease, and so no recovery lookups of a run taken up again.
    const lost = h.logs.filter((l) => l.includes("lost an event's lease"));
    expect(lost).toEqual([]);
    const lookups = h.emulator.calls
      .slice(since)
      .filter((c) => c.method === "conversations.history" || c.method === "conversations.replies");
    expect(lookups.map((c) => c.method)).toEqual([]);
  });
});
