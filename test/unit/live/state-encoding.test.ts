import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EventLive, encodeSessions, type PersistedInstance } from "../../../src/live/state.ts";
import type { WebhookMessage } from "../../../src/upstream/events/schemas.ts";

function message(guid: string, joinTime: number, left: boolean): WebhookMessage {
  return {
    eventId: "evt1",
    instanceId: "i1",
    type: "ATTENDEE_INFO",
    info: {
      endpointGuid: guid,
      endpointType: "browser",
      infoType: left ? "LEFT" : "JOIN",
      joinTime,
      ...(left ? { leaveTime: joinTime + 1_000 } : {}),
      name: guid,
    },
  };
}

/** Steps over 900 endpoints (several chunks); `step` 0 to `max` says what else happens. */
function manyEndpoints(max: number) {
  return fc.array(
    fc.record({
      guid: fc.integer({ min: 0, max: 900 }),
      joinTime: fc.integer({ min: 1, max: 3 }),
      left: fc.boolean(),
      step: fc.integer({ min: 0, max }),
    }),
    { minLength: 200, maxLength: 1_500 },
  );
}

describe("session lines kept between persists", () => {
  it("encode exactly as a fresh encoding after any sequence of joins and leaves", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            guid: fc.constantFrom("a", "b,c", "d%e", "f", "g h"),
            joinTime: fc.integer({ min: 1, max: 5 }),
            left: fc.boolean(),
            persist: fc.boolean(),
          }),
          { maxLength: 60 },
        ),
        (steps) => {
          const live = new EventLive();
          for (const s of steps) {
            live.apply(message(s.guid, s.joinTime, s.left));
            if (!s.persist) continue;
            const inst = live.current();
            const stored = live.toJSON();
            expect(stored.at(-1)?.sessions).toBe(encodeSessions(inst!.sessions, inst!.people));
            // And what is stored reads back to the same thing.
            expect(EventLive.from(stored).toJSON()).toEqual(stored);
          }
        },
      ),
      { seed: 20261122, numRuns: 200 },
    );
  });
  it("stay exact across many chunks of endpoints (new ones, rejoins and leaves anywhere)", () => {
    fc.assert(
      fc.property(manyEndpoints(40), (steps) => {
        const live = new EventLive();
        for (const s of steps) {
          live.apply(message(s.guid % 7 === 0 ? `g,${s.guid}` : `g${s.guid}`, s.joinTime, s.left));
          if (s.step !== 0) continue;
          expect(live.toJSON().at(-1)?.sessions).toBe(
            encodeSessions(live.current()!.sessions, live.current()!.people),
          );
        }
        const stored = live.toJSON();
        expect(stored.at(-1)?.sessions).toBe(
          encodeSessions(live.current()!.sessions, live.current()!.people),
        );
        expect(EventLive.from(stored).toJSON()).toEqual(stored);
      }),
      { seed: 20261123, numRuns: 40, endOnFailure: true },
    );
  });
  it("stay exact when read back from chunks between persists (the encoding kept, not rebuilt)", () => {
    fc.assert(
      fc.property(manyEndpoints(60), (steps) => {
        // What a store holds: the record's instances and each chunk's text, as the engine saves.
        const chunks = new Map<number, string>();
        let instances: PersistedInstance[] = [];
        const save = (live: EventLive) => {
          const p = live.persist();
          for (const c of p.chunks) chunks.set(c.n, c.text);
          instances = p.instances;
        };
        const reference = new EventLive();
        let live = new EventLive();
        for (const s of steps) {
          const m = message(`g${s.guid}`, s.joinTime, s.left);
          reference.apply(m);
          live.apply(m);
          if (s.step === 0) save(live);
          if (s.step === 1) {
            // A new owner: loads the last save; what was applied since is applied again.
            save(live);
            live = EventLive.from(instances, (_, n) => chunks.get(n));
            // Read back whole, nothing to write until a message touches a chunk.
            const again = live.persist();
            expect(again.chunks).toEqual([]);
          }
        }
        save(live);
        const count = instances.at(-1)?.chunks ?? 0;
        const stored = Array.from({ length: count }, (_, n) => chunks.get(n)).join("\n");
        const inst = reference.current();
        expect(stored).toBe(encodeSessions(inst!.sessions, inst!.people));
      }),
      { seed: 20261124, numRuns: 30, endOnFailure: true },
    );
  });
});
