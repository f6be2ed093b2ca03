import { describe, expect, it } from "vitest";
import { type LiveSubscription, publicEvent } from "../../../src/domain/subscription.ts";
import { emptyPending } from "../../../src/live/digest.ts";
import type { LiveModel } from "../../../src/live/live-model.ts";
import type { CallPosting, ChannelPosting } from "../../../src/live/live-record.ts";
import { channelsToServe } from "../../../src/live/planner.ts";
import { callAction, callChannel } from "../../../src/live/posts/call-plan.ts";
import { EventLive } from "../../../src/live/state.ts";
import { sampleEvent } from "../slack/blocks/fixtures.ts";

/**
 * When the event's Slack call needs a turn (src/live/posts/call-plan.ts callAction), with no Slack:
 * only a live instance starts one, in one channel of the event; a call with its block and its
 * participants up to date needs nothing until someone joins or leaves (then after the sync
 * period); an instance that ended, or an event cancelled, ends an open call; a call Slack refused
 * is not asked for again.
 */

const event = sampleEvent();
const S = event.start;
const EVERY = 5_000;

function model(state: "PREP_EVENT" | "IN_EVENT", call?: CallPosting, joins = 1): LiveModel {
  const live = new EventLive();
  const base = { eventId: event.id, instanceId: "i1" };
  live.apply({ ...base, type: "EVENT_STATE", info: { state } } as never, undefined, S);
  for (let i = 0; i < joins; i++) {
    const info = { infoType: "JOIN", endpointGuid: `g${i}`, name: `A${i}`, joinTime: S };
    live.apply({ ...base, type: "ATTENDEE_INFO", info } as never, undefined, S);
  }
  const sub = {
    team: "T1",
    eventId: event.id,
    channels: ["C1", "C2"],
    secretSha256: "x",
    types: ["EVENT_STATE", "ATTENDEE_INFO"],
    noise: "off",
    event: publicEvent(event),
    createdBy: "U1",
    createdAt: 0,
  } as LiveSubscription;
  const c = (): ChannelPosting => ({ cardTs: "1.1", pending: emptyPending(), seq: 0 });
  const channels: Record<string, ChannelPosting> = { C1: c(), C2: c() };
  if (call) (channels.C2 as ChannelPosting).call = call;
  return { sub, live, channels };
}

const settled = (over: Partial<CallPosting> = {}): CallPosting => ({
  instanceId: "i1",
  id: "R1",
  blockTs: "1.2",
  title: event.title,
  joinUrl: event.attendeeUrl,
  synced: "1:0",
  syncedAt: S,
  ...over,
});

describe("the call's turns (callAction)", () => {
  it("starts a call only once the instance is live, in one channel", () => {
    expect(callAction(model("PREP_EVENT"), "C1", S, EVERY)).toBeUndefined();
    const live = model("IN_EVENT");
    expect(callAction(live, "C1", S, EVERY)).toEqual({ kind: "call" });
    expect(callAction(live, "C2", S, EVERY)).toBeUndefined();
    expect(callChannel(live)).toBe("C1");
  });

  it("keeps the call where it was started", () => {
    const m = model("IN_EVENT", settled());
    expect(callChannel(m)).toBe("C2");
    expect(callAction(m, "C1", S, EVERY)).toBeUndefined();
    expect(callAction(m, "C2", S, EVERY)).toBeUndefined();
  });

  it("syncs participants after a join or leave, no sooner than the sync period", () => {
    const m = model("IN_EVENT", settled(), 2);
    expect(callAction(m, "C2", S + 1, EVERY)).toEqual({ kind: "wait", until: S + EVERY });
    expect(callAction(m, "C2", S + EVERY, EVERY)).toEqual({ kind: "call" });
  });

  it("posts a missing block, settles a mark, follows a new title", () => {
    const { blockTs: _, ...noBlock } = settled();
    expect(callAction(model("IN_EVENT", noBlock), "C2", S, EVERY)).toEqual({
      kind: "call",
    });
    expect(callAction(model("IN_EVENT", { instanceId: "i1", adding: S }), "C2", S, EVERY)).toEqual({
      kind: "call",
    });
    expect(callAction(model("IN_EVENT", settled({ title: "old" })), "C2", S, EVERY)).toEqual({
      kind: "call",
    });
  });

  it("ends an open call when its instance ended or the event was cancelled, and only then", () => {
    const m = model("IN_EVENT", settled());
    const inst = m.live.current();
    if (inst) inst.endedAt = S + 1;
    expect(callAction(m, "C2", S + 2, EVERY)).toEqual({ kind: "call" });
    const ended = model("IN_EVENT", settled({ ended: true }));
    const e = ended.live.current();
    if (e) e.endedAt = S + 1;
    expect(callAction(ended, "C2", S + 2, EVERY)).toBeUndefined();
    const cancelled = model("IN_EVENT", settled());
    (cancelled.sub as { cancelled?: boolean }).cancelled = true;
    expect(callAction(cancelled, "C2", S, EVERY)).toEqual({ kind: "call" });
  });

  it("does not ask again for a call Slack refused", () => {
    const m = model("IN_EVENT", { instanceId: "i1", skipped: "missing_scope" });
    expect(callAction(m, "C2", S, EVERY)).toBeUndefined();
    expect(callAction(m, "C1", S, EVERY)).toBeUndefined();
  });
});

describe("the call of a muted channel, and a call Slack asked to wait for", () => {
  it("ends an open call whose channel was muted, and starts no second one for the instance", () => {
    const m = model("IN_EVENT", settled());
    (m.sub as { channels: string[] }).channels = ["C1"];
    expect(callAction(m, "C2", S, EVERY)).toEqual({ kind: "call" });
    expect(callAction(m, "C1", S, EVERY)).toBeUndefined();
    expect(channelsToServe(m)).toContain("C2");
  });

  it("asks again for a call whose calls.add was refused for a while (no id, no mark)", () => {
    expect(callAction(model("IN_EVENT", { instanceId: "i1" }), "C2", S, EVERY)).toEqual({
      kind: "call",
    });
  });
});
