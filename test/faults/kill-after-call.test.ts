import { type CallRecord, callsOf } from "@onair/slack-emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHANNELS } from "../helpers/app-harness.ts";
import { type ChildApp, eventually, freePort } from "../helpers/live-fixtures.ts";
import { type LiveStage, startLiveStage } from "../helpers/live-stage.ts";

/**
 * kill -9 in the narrowest windows of the event's Slack call: Slack has accepted the call block
 * in the card's thread (calls.add answered and saved before it), or calls.end, and the app dies
 * before it records that. The next process adopts the block it finds (one calls.add, one block)
 * and takes an end already made as done (one call ended, once).
 */

let stage: LiveStage;
let env: Record<string, string>;

beforeAll(async () => {
  stage = await startLiveStage({ title: "Killed around the call", tmpPrefix: "onair-kill-call-" });
  env = stage.childEnv({ port: await freePort(), logLevel: "warn" });
}, 30_000);

afterAll(async () => {
  await stage?.close();
});

async function start(): Promise<ChildApp> {
  for (const c of stage.children) await c.stop().catch(() => undefined);
  const child = await stage.spawn(env);
  stage.emulator.setAppUrl(child.origin);
  return child;
}

/** SIGKILLs `child` the moment the emulator accepts the first call matching `match`. */
function killOn(child: ChildApp, match: (call: CallRecord) => boolean): Promise<void> {
  const exited = new Promise<void>((resolve) => child.proc.once("exit", () => resolve()));
  const off = stage.emulator.onCall((call) => {
    if (!call.ok || !match(call)) return;
    off();
    child.proc.kill("SIGKILL");
  });
  return exited;
}

const isCallBlock = (call: CallRecord) =>
  call.method === "chat.postMessage" && JSON.stringify(call.args.blocks ?? "").includes('"call"');

const ok = (method: string) =>
  stage.emulator.calls.filter((c) => c.method === method && c.ok).length;

describe("kill -9 around the event's Slack call", () => {
  it("adds the call and posts its block once, and ends it once", async () => {
    const first = await start();
    const cardTs = await stage.notify(first.origin);
    const blocks = () =>
      stage.emulator.workspace
        .replies(CHANNELS.events, cardTs)
        .filter((m) => JSON.stringify(m.blocks ?? "").includes('"type":"call"'));

    const killed = killOn(first, isCallBlock);
    const live = await stage.sandbox.sandbox.control.setState(stage.event.eventId, {
      state: "IN_EVENT",
    });
    await killed;
    expect(ok("calls.add")).toBe(1);
    expect(blocks()).toHaveLength(1);

    const second = await start();
    // The restarted owner finds the block and goes on with the same call: an attendee joining
    // reaches its card, and no second call or block appears.
    await stage.sandbox.sandbox.control.attendees(stage.event.eventId, { count: 2 });
    await stage.waitApplied(2);
    await new Promise((r) => setTimeout(r, 3_000));
    expect(ok("calls.add")).toBe(1);
    expect(blocks()).toHaveLength(1);
    // Having adopted the call, it asked Slack who is in it.
    expect(ok("calls.info")).toBe(1);
    const call = callsOf(stage.emulator.workspace)[0];
    expect(call?.external_unique_id).toBe(`${stage.event.eventId}:${live.instanceId}`);

    // The instance ends; the owner dies the moment Slack has ended the call.
    const ended = killOn(second, (c) => c.method === "calls.end");
    await stage.sandbox.sandbox.control.setState(stage.event.eventId, { state: "NOT_STARTED" });
    await ended;
    await start();
    // The next owner asks once more, hears the call is over already, and leaves it at that.
    await eventually(
      () =>
        stage.emulator.calls.some((c) => c.method === "calls.end" && c.error === "inactive_call")
          ? true
          : undefined,
      "the next owner's end of the call",
      20_000,
    );
    await new Promise((r) => setTimeout(r, 2_000));
    expect(ok("calls.end")).toBe(1);
    expect(stage.emulator.calls.filter((c) => c.method === "calls.end")).toHaveLength(2);
    expect(ok("calls.add")).toBe(1);
    expect(blocks()).toHaveLength(1);
    expect(callsOf(stage.emulator.workspace)).toHaveLength(1);
  }, 90_000);
});
