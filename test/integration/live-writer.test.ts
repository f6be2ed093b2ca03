import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  chunkGens,
  gensRuns,
  type LiveRecord,
  liveRepo,
  loadEventLive,
  sessionsId,
  sessionsRepo,
} from "../../src/live/live-record.ts";
import { LiveWriter } from "../../src/live/live-writer.ts";
import { EventLive } from "../../src/live/state.ts";
import { createCipher, openStore, type Repository, type Store } from "../../src/store/index.ts";
import type { WebhookMessage } from "../../src/upstream/events/schemas.ts";

/**
 * The live writer on a real SQLite file: a save is the changed chunks of sessions, then the
 * record naming them. When the record does not land (the process died, the write failed), what
 * is read next is the earlier save, whole, so replaying the outbox announces the attendees again.
 */

const TEAM = "T1";
const EVENT = "evt1";
const INSTANCE = "i1";

function join1(guid: string): WebhookMessage {
  return {
    eventId: EVENT,
    instanceId: INSTANCE,
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

const dir = mkdtempSync(join(tmpdir(), "onair-live-writer-"));
let store: Store;
let lives: Repository<LiveRecord>;
let sessions: Repository<string>;
/** The record writes of the writer under test: refused while set. */
let refuse = false;
let io: ConstructorParameters<typeof LiveWriter>[0];

beforeAll(async () => {
  store = await openStore(`sqlite://${join(dir, "onair.sqlite")}`, {
    cipher: createCipher(randomBytes(32)),
  });
  lives = store.repository(liveRepo);
  sessions = store.repository(sessionsRepo);
  io = {
    lives: {
      ...lives,
      put: (id, value) =>
        refuse ? Promise.reject(new Error("the record does not land")) : lives.put(id, value),
    },
    sessions,
    store,
  };
});
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const NOTHING = { maxGen: 0, unnamed: [] };
const chunkIds = () => sessions.ids(`${TEAM}:${EVENT}:`);
const del = (keys: readonly string[]) => store.deleteMany(keys);

describe("the live writer", () => {
  it("leaves the earlier save whole when a record does not land; the replay announces again", async () => {
    const live = new EventLive();
    const writer = new LiveWriter(io, TEAM, EVENT, undefined, NOTHING);
    for (const g of ["a", "b", "c"]) live.apply(join1(g));
    await writer.write(live, {});
    expect(await chunkIds()).toEqual([sessionsId(TEAM, EVENT, INSTANCE, 0, 1)]);

    // The next save: its chunk lands, its record does not.
    for (const g of ["d", "e"]) live.apply(join1(g));
    refuse = true;
    await expect(writer.write(live, {})).rejects.toThrow("the record does not land");
    refuse = false;
    expect(await chunkIds()).toHaveLength(2);

    // Read as the next owner reads it: the first save, and the second's chunk named by nothing.
    const loaded = await loadEventLive(lives, sessions, TEAM, EVENT);
    expect(loaded.live.current()?.unique).toBe(3);
    expect(loaded.stored).toEqual({
      maxGen: 2,
      unnamed: [sessionsId(TEAM, EVENT, INSTANCE, 0, 2)],
    });
    // Replayed from the outbox, the two are new to it: each is announced.
    const next = new LiveWriter(io, TEAM, EVENT, loaded.record, loaded.stored);
    for (const g of ["d", "e"]) {
      expect(loaded.live.apply(join1(g)).notices.map((n) => n.kind)).toEqual(["join"]);
    }
    await next.write(loaded.live, {});
    // The left-over chunk goes with the next turn's outbox deletes; the one replaced stays a
    // while for readers of the record before, then goes too.
    await next.deleteWith([], del);
    expect(await chunkIds()).toEqual([
      sessionsId(TEAM, EVENT, INSTANCE, 0, 1),
      sessionsId(TEAM, EVENT, INSTANCE, 0, 3),
    ]);
    await next.deleteWith([], del, true);
    expect(await chunkIds()).toEqual([sessionsId(TEAM, EVENT, INSTANCE, 0, 3)]);
    const after = await loadEventLive(lives, sessions, TEAM, EVENT);
    expect(after.live.current()?.unique).toBe(5);
    // Runs of [generation, chunks].
    expect(after.record?.instances[0]?.gens).toEqual([3, 1]);
  });

  it("reads chunks an earlier version wrote in place, and replaces them with named ones", async () => {
    const event = "evt-legacy";
    const live = new EventLive();
    for (const g of ["a", "b"]) live.apply({ ...join1(g), eventId: event });
    // As the previous version stored it: chunk n at `…:{n}`, a record naming no generation.
    const { instances, chunks } = live.persist();
    for (const c of chunks) await sessions.put(sessionsId(TEAM, event, c.instanceId, c.n), c.text);
    await lives.put(`${TEAM}:${event}`, {
      team: TEAM,
      eventId: event,
      instances,
      channels: {},
      updatedAt: 1,
    });

    const loaded = await loadEventLive(lives, sessions, TEAM, event);
    expect(loaded.live.current()?.unique).toBe(2);
    expect(loaded.stored).toEqual({ maxGen: 0, unnamed: [] });
    const writer = new LiveWriter(io, TEAM, event, loaded.record, loaded.stored);
    loaded.live.apply({ ...join1("c"), eventId: event });
    await writer.write(loaded.live, {});
    await writer.deleteWith([], del, true);
    expect(await sessions.ids(`${TEAM}:${event}:`)).toEqual([
      sessionsId(TEAM, event, INSTANCE, 0, 1),
    ]);
    expect((await loadEventLive(lives, sessions, TEAM, event)).live.current()?.unique).toBe(3);
  });

  it("writes a refused save again under the same generation, so refusals pile up nothing", async () => {
    const event = "evt-refused";
    const ids = () => sessions.ids(`${TEAM}:${event}:`);
    const live = new EventLive();
    const writer = new LiveWriter(io, TEAM, event, undefined, NOTHING);
    live.apply({ ...join1("a"), eventId: event });
    await writer.write(live, {});
    live.apply({ ...join1("b"), eventId: event });
    refuse = true;
    for (let i = 0; i < 3; i++) await expect(writer.write(live, {})).rejects.toThrow();
    refuse = false;
    const [first, second] = [1, 2].map((g) => sessionsId(TEAM, event, INSTANCE, 0, g));
    expect(await ids()).toEqual([first, second]);
    await writer.write(live, {});
    // Named now; only the first is garbage.
    await writer.deleteWith([], del, true);
    expect(await ids()).toEqual([second]);
    const loaded = await loadEventLive(lives, sessions, TEAM, event);
    expect(loaded.live.current()?.unique).toBe(2);
    expect(loaded.stored).toEqual({ maxGen: 2, unnamed: [] });
  });

  it("names many chunks' generations in a few runs, and reads them back", async () => {
    const event = "evt-big";
    const live = new EventLive();
    const writer = new LiveWriter(io, TEAM, event, undefined, NOTHING);
    // 600 endpoints: three chunks of 256.
    for (let i = 0; i < 600; i++) live.apply({ ...join1(`g${i}`), eventId: event });
    await writer.write(live, {});
    live.apply({ ...join1("late"), eventId: event });
    await writer.write(live, {});
    const loaded = await loadEventLive(lives, sessions, TEAM, event);
    expect(loaded.record?.instances[0]?.gens).toEqual([1, 2, 2, 1]);
    expect(loaded.live.current()?.unique).toBe(601);
    // The next owner's first save writes only the chunk its message touched, not all three.
    const next = new LiveWriter(io, TEAM, event, loaded.record, loaded.stored);
    loaded.live.apply({ ...join1("later"), eventId: event });
    await next.write(loaded.live, {});
    expect((await lives.get(`${TEAM}:${event}`))?.instances[0]?.gens).toEqual([1, 2, 3, 1]);
    expect(gensRuns([4, 4, 0, 9], 5)).toEqual([4, 2, 0, 1, 9, 1, 0, 1]);
    expect(gensRuns([], 3)).toBeUndefined();
    expect(chunkGens(5, [4, 2, 0, 1, 9, 1])).toEqual([4, 4, 0, 9, 0]);
  });
});
