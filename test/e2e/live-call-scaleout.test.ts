import { callsOf } from "@onair/slack-emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHANNELS } from "../helpers/app-harness.ts";
import { eventually, freePort } from "../helpers/live-fixtures.ts";
import {
  type Balancer,
  type LiveStage,
  startBalancer,
  startLiveStage,
} from "../helpers/live-stage.ts";
import { emptyRedisDatabase } from "../helpers/servers.ts";

/**
 * Two app processes on one Redis behind a load balancer that alternates webhooks between them:
 * the event's Slack call is added, its block posted and the call ended once per instance, as one
 * process would, for two instances in a row.
 */

const REDIS = process.env.TEST_REDIS_URL;
const required = process.env.ONAIR_REQUIRE_SERVICES === "1";
// A database of its own: the app's keys carry no namespace, so they must not meet other files'.
const DB = 9;

let stage: LiveStage;
let balancer: Balancer;
let envA: Record<string, string>;
let envB: Record<string, string>;

describe.skipIf(!REDIS && !required)("the Slack call with two instances on one Redis", () => {
  beforeAll(async () => {
    const storeUrl = await emptyRedisDatabase(DB);
    stage = await startLiveStage({ title: "Scaled-out call", storeUrl });
    const [portA, portB] = [await freePort(), await freePort()];
    balancer = await startBalancer([portA, portB], { failover: false });
    envA = stage.childEnv({ port: portA, publicUrl: balancer.url, logLevel: "warn" });
    envB = stage.childEnv({ port: portB, publicUrl: balancer.url, logLevel: "warn" });
  }, 30_000);

  afterAll(async () => {
    await balancer?.close();
    await stage?.close();
  });

  it("adds, posts and ends each instance's call once", async () => {
    const { emulator, event } = stage;
    const [a] = await Promise.all([stage.spawn(envA), stage.spawn(envB)]);
    const ts = await stage.notify(a.origin);
    const control = stage.sandbox.sandbox.control;
    const ok = (method: string) => emulator.calls.filter((c) => c.method === method && c.ok);
    const blocks = () =>
      emulator.workspace
        .replies(CHANNELS.events, ts)
        .filter((m) => JSON.stringify(m.blocks ?? "").includes('"type":"call"'));

    const instances: string[] = [];
    for (const [i, instanceId] of ["call-one", "call-two"].entries()) {
      await control.setState(event.eventId, { state: "PREP_EVENT", instanceId });
      await control.setState(event.eventId, { state: "IN_EVENT", instanceId });
      instances.push(instanceId);
      const joins = await control.attendees(event.eventId, { count: 40, concurrency: 8 });
      expect(joins.delivered).toBe(40);
      await eventually(
        () => (blocks().length === i + 1 ? true : undefined),
        `the call block of ${instanceId}`,
        20_000,
      );
      await control.setState(event.eventId, { state: "NOT_STARTED", instanceId });
      await eventually(
        () => (ok("calls.end").length === i + 1 ? true : undefined),
        `the end of ${instanceId}'s call`,
        20_000,
      );
    }
    expect(balancer.hits[0]).toBeGreaterThan(10);
    expect(balancer.hits[1]).toBeGreaterThan(10);
    await new Promise((r) => setTimeout(r, 2_000));
    expect(ok("calls.add").map((c) => c.args.external_unique_id)).toEqual(
      instances.map((id) => `${event.eventId}:${id}`),
    );
    expect(ok("calls.end")).toHaveLength(2);
    expect(blocks()).toHaveLength(2);
    const calls = callsOf(emulator.workspace);
    expect(calls).toHaveLength(2);
    expect(calls.every((c) => c.date_end !== undefined)).toBe(true);
  }, 90_000);
});
