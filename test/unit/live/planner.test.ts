import { describe, expect, it } from "vitest";
import { type LiveSubscription, publicEvent } from "../../../src/domain/subscription.ts";
import { frozenFigures, renderCard, renderMutedCard } from "../../../src/live/card.ts";
import { addNotice, emptyPending } from "../../../src/live/digest.ts";
import type { LiveModel } from "../../../src/live/live-model.ts";
import type { ChannelPosting } from "../../../src/live/live-record.ts";
import {
  applyTransition,
  hasWork,
  next,
  type PlanSettings,
  transitions,
} from "../../../src/live/planner.ts";
import { EventLive } from "../../../src/live/state.ts";
import type { NoiseLevel } from "../../../src/store/index.ts";
import { sampleEvent } from "../slack/blocks/fixtures.ts";

/**
 * The planner (src/live/planner.ts) with no Slack and no store: every state of the current
 * instance × noise level × muted or not × a moment before and after its scheduled end (plus the
 * quiet period). Asking never changes the model; what time makes due comes as a transition.
 */

const MIN = 60_000;
const settings: PlanSettings = { digestEveryMs: 5_000, quietMs: 15 * MIN, shareSettleMs: 10_000 };
const event = sampleEvent();
const S = event.start;
const E = event.end;
const QUIET_END = E + settings.quietMs;

type State = "none" | "NOT_STARTED" | "PREP_EVENT" | "IN_EVENT";
const STATES: State[] = ["none", "NOT_STARTED", "PREP_EVENT", "IN_EVENT"];
const NOISES: NoiseLevel[] = ["off", "counter", "digest", "every"];

function subOf(channels: string[], noise: NoiseLevel): LiveSubscription {
  return {
    team: "T1",
    eventId: event.id,
    channels,
    secretSha256: "x",
    types: ["EVENT_STATE", "ATTENDEE_INFO"],
    noise,
    event: publicEvent(event),
    createdBy: "U1",
    createdAt: 0,
  } as LiveSubscription;
}

function liveIn(state: State): EventLive {
  const live = new EventLive();
  if (state === "none") return live;
  const base = { eventId: event.id, instanceId: "i1" };
  live.apply({ ...base, type: "EVENT_STATE", info: { state } } as never, undefined, S);
  live.apply(
    {
      ...base,
      type: "ATTENDEE_INFO",
      info: {
        infoType: "JOIN",
        endpointGuid: "g1",
        name: "Ana",
        joinTime: S,
        endpointType: "WEB",
      },
    } as never,
    undefined,
    S,
  );
  return live;
}

/** C1 with its card posted as it is now, a join waiting for the thread; muted: C1 left the subscription. */
function modelOf(state: State, noise: NoiseLevel, muted: boolean): LiveModel {
  const live = liveIn(state);
  const subscribed = subOf(["C1"], noise);
  const card = renderCard(subscribed, live, "C1");
  const pending = emptyPending();
  if (state !== "none" && (noise === "digest" || noise === "every")) {
    addNotice(pending, { kind: "join", name: "Ana", instanceId: "i1" });
  }
  const c1: ChannelPosting = { cardTs: "1.1", pending, seq: 0 };
  if (card) c1.cardHash = card.hash;
  if (muted) {
    const frozen = { event: subscribed.event, figures: frozenFigures(live) };
    c1.muted = frozen;
    const mutedCard = renderMutedCard(frozen);
    if (mutedCard) c1.cardHash = mutedCard.hash;
  }
  return { sub: muted ? subOf(["C2"], noise) : subscribed, live, channels: { C1: c1 } };
}

function snapshot(m: LiveModel): string {
  return JSON.stringify({ live: m.live.toJSON(), channels: m.channels, sub: m.sub });
}

/** What C1 gets next, as the rules of the planner say, for one case of the matrix. */
function expected(state: State, noise: NoiseLevel, muted: boolean, ended: boolean): unknown {
  if (muted || state === "none") return undefined;
  if (ended) return { kind: "card" };
  if (noise === "counter") return { kind: "counter" };
  if (noise === "digest" || noise === "every") return { kind: "digest" };
  // Live, card up to date, nothing for the thread: the instance's Slack call (posts/call.ts).
  if (state === "IN_EVENT") return { kind: "call" };
  return { kind: "wait", until: QUIET_END };
}

describe("the planner: next(model, channel, now)", () => {
  for (const state of STATES) {
    for (const noise of NOISES) {
      for (const muted of [false, true]) {
        const name = `${state}, noise ${noise}, ${muted ? "muted" : "subscribed"}`;
        it(`${name}: before the scheduled end, the thread's work or a wait for the end`, () => {
          const m = modelOf(state, noise, muted);
          const before = snapshot(m);
          const now = QUIET_END - 1;
          expect(transitions(m, now, settings)).toEqual([]);
          expect(next(m, "C1", now, settings)).toEqual(expected(state, noise, muted, false));
          hasWork(m, now, settings);
          expect(snapshot(m)).toBe(before);
        });

        it(`${name}: across the scheduled end, the end is a step; the card then shows it`, () => {
          const m = modelOf(state, noise, muted);
          const before = snapshot(m);
          const now = QUIET_END + 1;
          const steps = transitions(m, now, settings);
          // Asking, however often, ends nothing.
          next(m, "C1", now, settings);
          hasWork(m, now, settings);
          expect(snapshot(m)).toBe(before);
          expect(m.live.current()?.endedAt).toBeUndefined();
          if (state === "none") {
            expect(steps).toEqual([]);
            expect(next(m, "C1", now, settings)).toBeUndefined();
            return;
          }
          expect(steps).toEqual([{ kind: "end-instance", instanceId: "i1", at: E }]);
          const made: string[] = [];
          for (const t of steps) {
            applyTransition(m, t, (ch) => {
              made.push(ch);
              return m.channels[ch] as ChannelPosting;
            });
          }
          expect(m.live.current()?.endedAt).toBe(E);
          expect(m.live.current()?.marks.at(-1)).toEqual(["ENDED", E]);
          expect(transitions(m, now, settings)).toEqual([]);
          expect(next(m, "C1", now, settings)).toEqual(expected(state, noise, muted, true));
          if (!muted) {
            // The card changing every turn does not starve the thread.
            const work = expected(state, noise, muted, false) as { kind: string };
            // The call is no thread work, and an instance that ended gets no call added.
            const thread = work.kind === "call" ? { kind: "wait" } : work;
            if (thread.kind !== "wait")
              expect(next(m, "C1", now, settings, "card")).toEqual(thread);
            // Once the card shows the end: the thread's work, then the report.
            const c1 = m.channels.C1 as ChannelPosting;
            c1.cardHash = renderCard(m.sub as LiveSubscription, m.live, "C1")?.hash as string;
            const after = thread.kind === "wait" ? { kind: "report" } : thread;
            expect(next(m, "C1", now, settings)).toEqual(after);
          }
        });
      }
    }
  }

  it("a muted channel whose card does not say so yet gets its muted card, and nothing else", () => {
    const m = modelOf("IN_EVENT", "digest", true);
    const c1 = m.channels.C1 as ChannelPosting;
    c1.cardHash = "stale";
    expect(next(m, "C1", S, settings)).toEqual({ kind: "card" });
    c1.blocked = "channel_not_found";
    expect(next(m, "C1", S, settings)).toBeUndefined();
  });

  it("notified again after a mute: the unmute is a step, not a side effect of asking", () => {
    const m = modelOf("IN_EVENT", "off", true);
    const again: LiveModel = { ...m, sub: subOf(["C1"], "off") };
    const before = snapshot(again);
    next(again, "C1", S, settings);
    expect(snapshot(again)).toBe(before);
    const steps = transitions(again, S, settings);
    expect(steps).toEqual([{ kind: "unmute", channel: "C1" }]);
    for (const t of steps) applyTransition(again, t, (ch) => again.channels[ch] as ChannelPosting);
    expect(again.channels.C1?.muted).toBeUndefined();
  });

  it("reminders an earlier version kept are taken over as a step, those already posted are not", () => {
    const m = modelOf("none", "off", false);
    const now = S - 120 * MIN;
    const sub = {
      ...subOf(["C1"], "off"),
      reminders: {
        C1: {
          mins: [],
          scheduled: [
            { id: "Q1", postAt: Math.floor((S - 60 * MIN) / 1000) },
            { id: "Q0", postAt: Math.floor((now - MIN) / 1000) },
          ],
        },
      },
    } as LiveSubscription;
    const legacy: LiveModel = { ...m, sub };
    const before = snapshot(legacy);
    // Not taken over yet: the planner sees nothing held.
    expect(next(legacy, "C1", now, settings)).toBeUndefined();
    expect(snapshot(legacy)).toBe(before);
    const steps = transitions(legacy, now, settings);
    expect(steps).toEqual([
      {
        kind: "adopt-legacy-reminders",
        channel: "C1",
        reminders: [{ id: "Q1", postAt: Math.floor((S - 60 * MIN) / 1000), key: "legacy:Q1" }],
      },
    ]);
    for (const t of steps)
      applyTransition(legacy, t, (ch) => legacy.channels[ch] as ChannelPosting);
    expect(next(legacy, "C1", now, settings)).toEqual({ kind: "reminder" });
    // Once Slack has posted it, forgetting it is a step too.
    const later = S - 30 * MIN;
    const forget = transitions(legacy, later, settings);
    expect(forget).toEqual([{ kind: "forget-posted-reminders", channel: "C1", keep: [] }]);
    for (const t of forget)
      applyTransition(legacy, t, (ch) => legacy.channels[ch] as ChannelPosting);
    expect(legacy.channels.C1?.reminders).toBeUndefined();
    expect(transitions(legacy, later, settings)).toEqual([]);
  });

  it("a digest channel waits out the digest period after its last thread post", () => {
    const m = modelOf("IN_EVENT", "digest", false);
    (m.channels.C1 as ChannelPosting).lastThreadAt = S;
    // This workspace has no Calls API (posts/call.ts): only the digest is in question.
    (m.channels.C1 as ChannelPosting).call = { instanceId: "i1", skipped: "missing_scope" };
    expect(next(m, "C1", S + 1, settings)).toEqual({
      kind: "wait",
      until: S + settings.digestEveryMs,
    });
    const every = modelOf("IN_EVENT", "every", false);
    (every.channels.C1 as ChannelPosting).lastThreadAt = S;
    expect(next(every, "C1", S + 1, settings)).toEqual({ kind: "digest" });
  });
});
