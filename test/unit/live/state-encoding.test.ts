import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EventLive, encodeSessions } from "../../../src/live/state.ts";
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
      fc.property(
        fc.array(
          fc.record({
            guid: fc.integer({ min: 0, max: 900 }),
            joinTime: fc.integer({ min: 1, max: 3 }),
            left: fc.boolean(),
            persist: fc.integer({ min: 0, max: 40 }),
          }),
          { minLength: 200, maxLength: 1_500 },
        ),
        (steps) => {
          const live = new EventLive();
          for (const s of steps) {
            live.apply(
              message(s.guid % 7 === 0 ? `g,${s.guid}` : `g${s.guid}`, s.joinTime, s.left),
            );
            if (s.persist !== 0) continue;
            expect(live.toJSON().at(-1)?.sessions).toBe(
              encodeSessions(live.current()!.sessions, live.current()!.people),
            );
          }
          const stored = live.toJSON();
          expect(stored.at(-1)?.sessions).toBe(
            encodeSessions(live.current()!.sessions, live.current()!.people),
          );
          expect(EventLive.from(stored).toJSON()).toEqual(stored);
        },
      ),
      { seed: 20261123, numRuns: 40, endOnFailure: true },
    );
  });
});
