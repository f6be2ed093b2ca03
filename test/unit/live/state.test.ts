import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { addNotice, digestText, emptyPending, subtract } from "../../../src/live/digest.ts";
import { EventLive } from "../../../src/live/state.ts";
import type { WebhookMessage } from "../../../src/upstream/events/schemas.ts";

const E = "evt1";

function join(guid: string, joinTime: number, name = guid, email?: string): WebhookMessage {
  return {
    eventId: E,
    instanceId: "i1",
    type: "ATTENDEE_INFO",
    info: {
      endpointGuid: guid,
      endpointType: "browser",
      infoType: "JOIN",
      joinTime,
      name,
      ...(email ? { email } : {}),
    },
  };
}

function leave(guid: string, joinTime: number, leaveTime: number): WebhookMessage {
  return {
    eventId: E,
    instanceId: "i1",
    type: "ATTENDEE_INFO",
    info: {
      endpointGuid: guid,
      endpointType: "browser",
      infoType: "LEFT",
      joinTime,
      leaveTime,
      name: guid,
    },
  };
}

function state(s: string, instanceId = "i1"): WebhookMessage {
  return { eventId: E, instanceId, type: "EVENT_STATE", info: { state: s } };
}

function figures(live: EventLive) {
  const i = live.current();
  return {
    present: i?.present,
    peak: i?.peak,
    unique: i?.unique,
    joins: i?.joins,
    leaves: i?.leaves,
  };
}

describe("EventLive", () => {
  it("counts 10,000 joins and 2,000 leaves exactly", () => {
    const live = new EventLive();
    for (let n = 0; n < 10_000; n++) live.apply(join(`g${n}`, 1_000 + n));
    for (let n = 0; n < 2_000; n++) live.apply(leave(`g${n}`, 1_000 + n, 50_000));
    expect(figures(live)).toEqual({
      present: 8_000,
      peak: 10_000,
      unique: 10_000,
      joins: 10_000,
      leaves: 2_000,
    });
  });

  it("moves states forward only within an instance; a new instance starts fresh", () => {
    const live = new EventLive();
    expect(live.apply(state("PREP_EVENT")).changed).toBe(true);
    expect(live.apply(state("NOT_STARTED")).changed).toBe(false);
    expect(live.apply(state("IN_EVENT")).changed).toBe(true);
    expect(live.apply(state("PREP_EVENT")).changed).toBe(false);
    expect(live.apply(state("IN_EVENT")).changed).toBe(false);
    expect(live.apply(state("SOMETHING_ELSE")).changed).toBe(false);
    expect(live.current()?.state).toBe("IN_EVENT");
    live.apply(join("a", 1));
    live.apply(state("NOT_STARTED", "i2"));
    expect(live.current()?.id).toBe("i2");
    expect(live.current()?.state).toBe("NOT_STARTED");
    expect(live.current()?.unique).toBe(0);
  });

  it("recognises a retried or replayed message and yields no second notice", () => {
    const live = new EventLive();
    expect(live.apply(join("a", 1)).notices).toHaveLength(1);
    expect(live.apply(join("a", 1)).notices).toHaveLength(0);
    expect(live.apply(leave("a", 1, 5)).notices).toHaveLength(1);
    expect(live.apply(leave("a", 1, 5)).notices).toHaveLength(0);
    // A rejoin is a new session of the same endpoint: counted, not unique again.
    expect(live.apply(join("a", 9)).notices).toHaveLength(1);
    expect(figures(live)).toEqual({ present: 1, peak: 1, unique: 1, joins: 2, leaves: 1 });
  });

  it("counts an attendee who joins again while in (a lost LEFT) once, with no second notice", () => {
    const live = new EventLive();
    expect(live.apply(join("g1", 1_000, "Ada")).notices).toHaveLength(1);
    expect(live.apply(join("g1", 5_000, "Ada")).notices).toEqual([]);
    const inst = live.current();
    expect({ present: inst?.present, unique: inst?.unique, peak: inst?.peak }).toEqual({
      present: 1,
      unique: 1,
      peak: 1,
    });
  });

  it("gives the same figures for any order and any duplication of the same messages", () => {
    const session = fc.record({
      guid: fc.constantFrom("a", "b", "c", "d", "e"),
      joinTime: fc.integer({ min: 1, max: 20 }),
      left: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(session, { maxLength: 30 }), fc.integer(), (sessions, seed) => {
        const messages: WebhookMessage[] = [];
        for (const s of sessions) {
          messages.push(join(s.guid, s.joinTime));
          if (s.left) messages.push(leave(s.guid, s.joinTime, s.joinTime + 100));
        }
        const inOrder = new EventLive();
        for (const m of messages) inOrder.apply(m);
        // Shuffled (deterministically by seed) and every message delivered twice.
        const doubled = [...messages, ...messages]
          .map((m, i) => ({ m, k: Math.sin(seed + i) }))
          .sort((x, y) => x.k - y.k)
          .map((x) => x.m);
        const shuffled = new EventLive();
        for (const m of doubled) shuffled.apply(m);
        const a = inOrder.current();
        const b = shuffled.current();
        expect(b?.present).toBe(a?.present);
        expect(b?.unique).toBe(a?.unique);
        expect(b?.joins).toBe(a?.joins);
        expect(b?.leaves).toBe(a?.leaves);
      }),
    );
  });

  it("persists only the chunks of sessions a turn changed, and rebuilds from them", () => {
    const live = new EventLive();
    for (let i = 0; i < 1_000; i++) live.apply(join(`g${i}`, i + 1));
    const first = live.persist();
    // 1,000 endpoints in chunks of 256: all four written the first time.
    expect(first.chunks.map((c) => c.n)).toEqual([0, 1, 2, 3]);
    expect(first.instances[0]?.chunks).toBe(4);
    expect(first.instances[0]?.sessions).toBeUndefined();
    const store = new Map(first.chunks.map((c) => [`${c.instanceId}:${c.n}`, c.text]));

    live.apply(leave("g5", 6, 100));
    live.apply(join("g1000", 1_001));
    const second = live.persist();
    // g5 is in chunk 0, g1000 starts chunk 3's last endpoints: only those two are written.
    expect(second.chunks.map((c) => c.n).sort()).toEqual([0, 3]);
    for (const c of second.chunks) store.set(`${c.instanceId}:${c.n}`, c.text);
    expect(live.persist().chunks).toEqual([]);

    const back = EventLive.from(second.instances, (id, n) => store.get(`${id}:${n}`));
    expect(figures(back)).toEqual(figures(live));
  });

  it("writes a failed persist's chunks again, and names the instances it dropped", () => {
    const live = new EventLive();
    live.apply(join("a", 1));
    const failed = live.persist();
    live.redirty(failed.chunks);
    expect(live.persist().chunks.map((c) => c.n)).toEqual([0]);
    for (let i = 0; i < 6; i++) {
      live.apply({ ...join(`x${i}`, 10 + i), instanceId: `inst-${i}` } as WebhookMessage);
    }
    expect(live.persist().dropped.length).toBeGreaterThan(0);
  });

  it("survives a round trip through its stored form", () => {
    const live = new EventLive();
    live.apply(state("PREP_EVENT"));
    live.apply(join("k", 1, "Kei", "kei@example.com"), {
      panelists: new Set(["kei@example.com"]),
      moderators: new Set(),
    });
    live.apply(join("a", 2));
    live.apply(join("b", 3));
    live.apply(leave("b", 3, 10));
    const back = EventLive.from(JSON.parse(JSON.stringify(live.toJSON())));
    expect(figures(back)).toEqual(figures(live));
    expect(back.current()?.state).toBe("PREP_EVENT");
    expect(back.staffIn(back.current()!)).toEqual({ panelists: ["Kei"], moderators: [] });
    expect(back.apply(join("a", 2)).notices).toHaveLength(0);
  });

  it("averages attended minutes over distinct attendees", () => {
    const live = new EventLive();
    live.apply(join("a", 0));
    live.apply(leave("a", 0, 10 * 60_000));
    live.apply(join("b", 0));
    expect(live.averageMinutes(live.current()!, 20 * 60_000)).toBe(15);
  });
});

describe("digests", () => {
  it("caps names with 'and N others' and keeps exact counts", () => {
    const p = emptyPending();
    for (let n = 0; n < 25; n++) addNotice(p, { kind: "join", name: `P${n}`, instanceId: "i" });
    addNotice(p, { kind: "leave", name: "Lee", email: "lee@example.com", instanceId: "i" });
    const text = digestText("digest", p, { present: 24 }, false);
    expect(text).toContain("*25 joined*: P0, P1, P2, P3, P4, P5, P6, P7, P8, P9 and 15 others");
    expect(text).toContain("*1 left*: Lee");
    expect(text).not.toContain("lee@example.com");
    expect(digestText("digest", p, { present: 24 }, true)).toContain("Lee (lee@example.com)");
    expect(text).toContain("Now 24 attending.");
  });

  it("leaves what arrived during a post for the next one", () => {
    const p = emptyPending();
    addNotice(p, { kind: "join", name: "A", instanceId: "i" });
    const taken = structuredClone(p);
    addNotice(p, { kind: "join", name: "B", instanceId: "i" });
    const rest = subtract(p, taken);
    expect(rest.joined).toBe(1);
    expect(rest.sample).toEqual([["j", "B"]]);
  });

  it("escapes names so they cannot mention anyone", () => {
    const p = emptyPending();
    addNotice(p, { kind: "join", name: "<!channel> *bold*", instanceId: "i" });
    expect(digestText("every", p, { present: 1 }, false)).not.toContain("<!channel>");
  });
});
