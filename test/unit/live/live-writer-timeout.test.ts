import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type LiveRecord,
  liveRepo,
  loadEventLive,
  sessionsRepo,
} from "../../../src/live/live-record.ts";
import { LiveWriter } from "../../../src/live/live-writer.ts";
import { EventLive } from "../../../src/live/state.ts";
import {
  createCipher,
  openStore,
  type Repository,
  STORE_ERROR_CODES,
  type Store,
  StoreError,
} from "../../../src/store/index.ts";
import type { WebhookMessage } from "../../../src/upstream/events/schemas.ts";

/**
 * A record write that times out may still have landed (the store's bound is a race with the
 * call, not a cancel). The next save must then not rewrite the chunks that record names: a
 * process dying between that save's chunks and its record would leave the landed record (its
 * pending notices) paired with later sessions, and the replay of the outbox would announce
 * nobody: the card counts an attendee no digest ever shows.
 */

const TEAM = "T1";
const EVENT = "evt1";

function join1(guid: string): WebhookMessage {
  return {
    eventId: EVENT,
    instanceId: "i1",
    type: "ATTENDEE_INFO",
    info: {
      endpointGuid: guid,
      endpointType: "browser",
      infoType: "JOIN",
      joinTime: 1,
      name: guid,
    },
  };
}

let store: Store;
let lives: Repository<LiveRecord>;
let sessions: Repository<string>;
/** How the next record write goes: lands, lands but times out, or is lost (the process died). */
let record: "ok" | "lands-late" | "lost" = "ok";

beforeAll(async () => {
  store = await openStore("memory://live-writer-timeout", {
    cipher: createCipher(randomBytes(32)),
    sweepIntervalMs: 0,
  });
  lives = store.repository(liveRepo);
  sessions = store.repository(sessionsRepo);
});
afterAll(async () => {
  await store?.close();
});

describe("the live writer after a record write timed out", () => {
  it("never rewrites the chunks a record that landed late names", async () => {
    const io = {
      lives: {
        ...lives,
        put: async (id: string, value: LiveRecord) => {
          if (record === "lost") throw new Error("the process died before the record");
          await lives.put(id, value);
          if (record === "lands-late") {
            throw new StoreError(STORE_ERROR_CODES.timeout, "set", "memory", id, "no answer");
          }
        },
      },
      sessions,
      store,
    };
    const live = new EventLive();
    const writer = new LiveWriter(io, TEAM, EVENT, undefined, { maxGen: 0, unnamed: [] });
    for (const g of ["a", "b"]) live.apply(join1(g));
    await writer.write(live, {});

    // Save 2 (c joined): its record lands, but the writer hears a timeout.
    live.apply(join1("c"));
    record = "lands-late";
    await expect(writer.write(live, {})).rejects.toBeInstanceOf(StoreError);
    // Save 3 (d joined): its chunks land, its record does not.
    live.apply(join1("d"));
    record = "lost";
    await expect(writer.write(live, {})).rejects.toThrow("the process died");
    record = "ok";

    // The next owner reads save 2 whole: a, b, c; the replay of d announces d.
    const loaded = await loadEventLive(lives, sessions, TEAM, EVENT);
    expect(loaded.live.current()?.unique).toBe(3);
    expect(loaded.live.apply(join1("d")).notices.map((n) => n.name)).toEqual(["d"]);
    // And its own save lands over whatever the dead owner left.
    const next = new LiveWriter(io, TEAM, EVENT, loaded.record, loaded.stored);
    await next.write(loaded.live, {});
    await next.deleteWith([], (k) => store.deleteMany(k), true);
    expect((await loadEventLive(lives, sessions, TEAM, EVENT)).live.current()?.unique).toBe(4);
  });
});
