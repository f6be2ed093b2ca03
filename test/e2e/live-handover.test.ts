import { createClient } from "@redis/client";
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
 * A rolling restart: of two instances on one Redis, the one owning the live event is stopped
 * (SIGTERM, as a deploy does). It gives the event's lease back on its way out, so the other
 * takes the event over at once instead of when the lease runs out; the counts stay exact.
 */

const REDIS = process.env.TEST_REDIS_URL;
const required = process.env.ONAIR_REQUIRE_SERVICES === "1";
// A database of its own: the app's keys carry no namespace, so they must not meet other files'.
const DB = 14;

type Redis = ReturnType<typeof createClient>;
let redis: Redis;
let stage: LiveStage;
let balancer: Balancer;

/** Who holds the event's lease now (the engine's owner id), if anyone. */
async function leaseHolder(): Promise<string | undefined> {
  const keys = (await redis.keys("live-lease:*")).map(String);
  expect(keys.length).toBeLessThanOrEqual(1);
  const raw = keys[0] === undefined ? null : await redis.get(keys[0]);
  return raw === null ? undefined : String((JSON.parse(String(raw)) as { value: unknown }).value);
}

/** The owner id a child logged when it took the event. */
function ownerLogged(output: readonly string[]): string | undefined {
  const line = output
    .join("")
    .split("\n")
    .filter((l) => l.includes("live: owning an event"))
    .at(-1);
  return line === undefined ? undefined : (JSON.parse(line) as { owner: string }).owner;
}

describe.skipIf(!REDIS && !required)("a rolling restart of two instances on one Redis", () => {
  beforeAll(async () => {
    const storeUrl = await emptyRedisDatabase(DB);
    redis = createClient({ url: storeUrl });
    await redis.connect();
    stage = await startLiveStage({ title: "Rolling restart town hall", storeUrl });
  }, 30_000);

  afterAll(async () => {
    await balancer?.close();
    await stage?.close();
    await redis?.close();
  });

  it("the stopped owner gives the event back, and the other carries on exactly", async () => {
    const ports: [number, number] = [await freePort(), await freePort()];
    // A health-checked balancer: a stopped instance's share goes to the other.
    balancer = await startBalancer(ports, { failover: true });
    const envs = ports.map((port) =>
      stage.childEnv({ port, publicUrl: balancer.url, logLevel: "info" }),
    );
    const children = await Promise.all(envs.map((env) => stage.spawn(env)));
    const ts = await stage.notify(children[0]!.origin);
    const control = stage.sandbox.sandbox.control;
    await control.setState(stage.event.eventId, { state: "IN_EVENT" });
    const first = await control.attendees(stage.event.eventId, { count: 60, concurrency: 4 });
    expect(first.delivered).toBe(60);
    await expectExactCounts(
      stage,
      ts,
      { joined: 60, left: 0, now: 60, peak: 60, unique: 60 },
      "before the restart",
    );

    // The event's owner: the lease holds its id, and it logged the same id when it took it.
    const holder = await leaseHolder();
    expect(holder).toBeDefined();
    const owner = children.find((c) => ownerLogged(c.output) === holder);
    const other = children.find((c) => c !== owner);
    if (!owner || !other) throw new Error(`no child logged owning the event as ${holder}`);

    await owner.stop();
    expect(owner.output.join("")).toContain("live: gave an event back");
    // Given back: nobody holds it, or the other instance already took it; never the stopped one.
    expect(await leaseHolder()).not.toBe(holder);

    const again = await control.attendees(stage.event.eventId, { count: 40, concurrency: 4 });
    expect(again.delivered).toBe(40);
    await expectExactCounts(
      stage,
      ts,
      { joined: 100, left: 0, now: 100, peak: 100, unique: 100 },
      "after the owner stopped",
    );
    expect(ownerLogged(other.output)).toBeDefined();
    expect(ownerLogged(other.output)).not.toBe(holder);
  }, 90_000);
});
