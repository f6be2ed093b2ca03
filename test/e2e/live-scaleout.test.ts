import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../helpers/live-fixtures.ts";
import {
  type Balancer,
  expectExactCounts,
  type LiveStage,
  startBalancer,
  startLiveStage,
} from "../helpers/live-stage.ts";
import { emptyRedisDatabase } from "../helpers/servers.ts";

/**
 * Two app processes on one Redis behind a load balancer that alternates between them: the
 * channel shows what one process would show, with no duplicates.
 */

const REDIS = process.env.TEST_REDIS_URL;
const required = process.env.ONAIR_REQUIRE_SERVICES === "1";
// A database of its own: the app's keys carry no namespace, so they must not meet other files'.
const DB = 11;

let stage: LiveStage;
let balancer: Balancer;
let envA: Record<string, string>;
let envB: Record<string, string>;

describe.skipIf(!REDIS && !required)("two instances on one Redis", () => {
  beforeAll(async () => {
    const storeUrl = await emptyRedisDatabase(DB);

    stage = await startLiveStage({ title: "Scaled-out all hands", storeUrl });
    const [portA, portB] = [await freePort(), await freePort()];
    balancer = await startBalancer([portA, portB], { failover: false });
    envA = stage.childEnv({ port: portA, publicUrl: balancer.url, logLevel: "warn" });
    envB = stage.childEnv({ port: portB, publicUrl: balancer.url, logLevel: "warn" });
  }, 30_000);

  afterAll(async () => {
    await balancer?.close();
    await stage?.close();
  });

  it("posts one card and digests with exact counts while webhooks alternate", async () => {
    const { emulator, event } = stage;
    const [a] = await Promise.all([stage.spawn(envA), stage.spawn(envB)]);
    const ts = await stage.notify(a.origin);
    const control = stage.sandbox.sandbox.control;
    for (const state of ["NOT_STARTED", "PREP_EVENT", "IN_EVENT"] as const) {
      const r = await control.setState(event.eventId, { state });
      expect(r.deliveries.map((d) => d.status)).toEqual([204]);
    }
    const joins = await control.attendees(event.eventId, { count: 200, concurrency: 8 });
    expect(joins.delivered).toBe(200);
    const again = await control.attendees(event.eventId, {
      leave: joins.joined.slice(0, 50).map((x) => x.endpointGuid),
      concurrency: 8,
    });
    expect(again.delivered).toBe(50);
    expect(balancer.hits[0]).toBeGreaterThan(50);
    expect(balancer.hits[1]).toBeGreaterThan(50);

    await expectExactCounts(
      stage,
      ts,
      { joined: 200, left: 50, now: 150, peak: 200, unique: 200 },
      "from both instances",
    );
    // The card went forward only: no update ever showed an earlier state after a later one.
    const rank = (t: string) =>
      t.includes("Live now")
        ? 2
        : t.includes("Getting ready")
          ? 1
          : t.includes("Not started")
            ? 0
            : -1;
    const seen = emulator.calls
      .filter((c) => c.method === "chat.update" && c.args.ts === ts && c.ok)
      .map((c) => rank(JSON.stringify(c.args.blocks)));
    expect([...seen].sort((x, y) => x - y)).toEqual(seen);
    // Two app starts (each compiling the app and its engine thread) and a burst.
  }, 60_000);
});
