import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { liveRepo } from "../../src/live/live-record.ts";
import { createCipher, openStore } from "../../src/store/index.ts";
import { CHANNELS, TEAM } from "../helpers/app-harness.ts";
import { eventually, freePort } from "../helpers/live-fixtures.ts";
import {
  type Balancer,
  type LiveStage,
  startBalancer,
  startLiveStage,
} from "../helpers/live-stage.ts";
import { emptyRedisDatabase } from "../helpers/servers.ts";

/**
 * The attendance report is posted once per instance: with two app instances on one Redis taking
 * the webhooks in turn, and again after both are killed (-9) and a third starts on the same
 * store and takes the event over (a late message for the ended instance wakes it), even when the
 * kill left the upload's outcome unrecorded: the new owner finds the report in the thread.
 */

const REDIS = process.env.TEST_REDIS_URL;
const required = process.env.ONAIR_REQUIRE_SERVICES === "1";
const DB = 13;
const MIN = 60_000;

let stage: LiveStage;
let balancer: Balancer;
let envs: Array<Record<string, string>>;
let storeUrl: string;

describe.skipIf(!REDIS && !required)("the attendance report, once", () => {
  beforeAll(async () => {
    storeUrl = await emptyRedisDatabase(DB);
    stage = await startLiveStage({ title: "Reported once", storeUrl });
    const ports: [number, number] = [await freePort(), await freePort()];
    balancer = await startBalancer(ports, { failover: true });
    envs = ports.map((port) => stage.childEnv({ port, publicUrl: balancer.url, logLevel: "warn" }));
  }, 30_000);

  afterAll(async () => {
    await balancer?.close();
    await stage?.close();
  });

  it("posts one report across two instances on one Redis and a kill -9 of both", async () => {
    const { emulator, event } = stage;
    const [a, b] = await Promise.all(envs.map((e) => stage.spawn(e)));
    const ts = await stage.notify(a!.origin);
    const reports = () =>
      emulator.workspace.replies(CHANNELS.events, ts).filter((m) => Array.isArray(m.files));
    const control = stage.sandbox.sandbox.control;
    await control.setState(event.eventId, { state: "IN_EVENT" });
    const base = Math.floor((Date.now() - 20 * MIN) / MIN) * MIN;
    const joins = await control.attendees(event.eventId, { count: 6, at: base, concurrency: 4 });
    await control.attendees(event.eventId, {
      at: base + 4 * MIN,
      leave: joins.joined.slice(0, 2).map((j) => j.endpointGuid),
    });
    await control.setState(event.eventId, { state: "NOT_STARTED" });
    const [report] = await eventually(
      () => (reports().length > 0 ? reports() : undefined),
      `the report ${JSON.stringify(emulator.calls.slice(-12).map((x) => [x.method, x.ok, x.error]))} ${stage.children.map((ch) => ch.output.join("").slice(-1500)).join(" | ")}`,
      // Webhooks alternate between the two instances: the one that owns the event posts, and
      // ownership can move (idle release 10 s, then the lease) before it does.
      45_000,
    );
    expect(JSON.stringify(report?.blocks)).toContain(
      "Peak *6* · unique *6* · present at the end *4*",
    );

    // The owner records the report after Slack has it: wait for that record, then kill both.
    const store = await openStore(storeUrl, { cipher: createCipher(stage.key) });
    const lives = store.repository(liveRepo);
    const id = `${TEAM}:${event.eventId}`;
    await eventually(
      async () =>
        (await lives.get(id))?.channels[CHANNELS.events]?.reported?.includes(joins.instanceId)
          ? true
          : undefined,
      "the report recorded",
      20_000,
    );
    await Promise.all([a!.kill(), b!.kill()]);
    // As if the kill came after the upload and before its outcome was recorded: the channel's
    // record holds the in-flight mark and not the instance. The next owner must look first.
    const rec = await lives.get(id);
    const posting = rec?.channels[CHANNELS.events];
    expect(posting?.reported).toEqual([joins.instanceId]);
    await lives.put(id, {
      ...rec!,
      channels: {
        ...rec!.channels,
        [CHANNELS.events]: {
          ...posting!,
          reported: [],
          reportPosting: { instanceId: joins.instanceId, at: Date.now() - 120_000 },
        },
      },
    });
    await store.close();
    const lookupsBefore = emulator.calls.filter((x) => x.method === "conversations.replies").length;
    const c = await stage.spawn(envs[0]!);
    emulator.setAppUrl(c.origin);
    // A late LEFT for the ended instance: the new process takes the event over and applies it.
    const late = await control.attendees(event.eventId, {
      at: base + 9 * MIN,
      leave: joins.joined.slice(2, 3).map((j) => j.endpointGuid),
    });
    expect(late.delivered).toBe(1);
    await eventually(
      () =>
        stage
          .view(ts)
          .thread()
          .some((t) => /1 left|left/.test(t))
          ? true
          : undefined,
      `the late leave in the thread (${c.output.join("").slice(-3000)})`,
      20_000,
    );
    await eventually(
      () =>
        emulator.calls.filter((x) => x.method === "conversations.replies").length > lookupsBefore
          ? true
          : undefined,
      `the thread looked up for the report (${c.output.join("").slice(-3000)}) ${JSON.stringify(emulator.calls.slice(-8).map((x) => [x.method, x.ok]))}`,
      // The new owner takes the event over once the killed owner's lease has run out.
      45_000,
    );
    await new Promise((r) => setTimeout(r, 2_000));
    expect(reports()).toHaveLength(1);
  }, 150_000);
});
