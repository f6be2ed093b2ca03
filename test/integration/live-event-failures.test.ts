import { afterEach, describe, expect, it } from "vitest";
import { activeRepo, liveRepo } from "../../src/live/live-record.ts";
import {
  outboxBatchRepo,
  outboxRepo,
  outboxWorkRepo,
  STORE_ERROR_CODES,
  StoreError,
  timeOrderedId,
} from "../../src/store/index.ts";
import { eventually } from "../helpers/live-fixtures.ts";
import { capturedLogs } from "../helpers/log-lines.ts";
import { engineSuite, joinItem, subscribeEvent } from "../helpers/outbox-items.ts";

/**
 * One event's turn failing on its own account (a record it cannot read) holds up nobody else:
 * the other events' items are applied, markers of events left by a process that is gone are
 * taken up, and the failing event's items stay, tried again after a back-off and logged once per
 * try. The store itself failing still fails the whole turn. On a real SQLite file.
 */

describe("the live engine when one event's turn fails", () => {
  const { logger, lines } = capturedLogs("warn");
  const restore: Array<() => void> = [];
  const { suite, start } = engineSuite("event-failures", logger, {
    pollMs: 20,
    maxPollMs: 50,
    minTurnMs: 10,
  });
  afterEach(() => {
    for (const r of restore.splice(0)) r();
    lines.length = 0;
  });

  const item = joinItem;
  const subscribe = (eventId: string) => subscribeEvent(suite.store, eventId);

  /** A record of the event whose item fails its schema as it is read back, and its marker. */
  const unreadable = async (eventId: string) => {
    const id = `T1:${eventId}:${timeOrderedId()}`;
    const bad = { ...item(eventId, 0), receivedAt: "yesterday" };
    await suite.store.repository(outboxBatchRepo).put(id, { items: [bad] });
    await suite.store.outbox.markWork("T1", eventId, id);
    return id;
  };

  /** When each event's listings began (each a try at its items). */
  const pages = new Map<string, number[]>();
  function countPages(): void {
    const original = suite.store.outbox.eventPage;
    suite.store.outbox.eventPage = (team, eventId, limit) => {
      pages.set(eventId, [...(pages.get(eventId) ?? []), Date.now()]);
      return original.call(suite.store.outbox, team, eventId, limit);
    };
    restore.push(() => {
      suite.store.outbox.eventPage = original;
      pages.clear();
    });
  }

  const left = async (eventId: string) =>
    (await suite.store.outbox.listEvent("T1", eventId)).length;
  const failures = (eventId: string) =>
    lines.filter((l) => l.event === eventId && String(l.msg).includes("an event's turn failed"));

  it("applies the other events' items and takes up left markers while one event's record cannot be read", async () => {
    await subscribe("E1");
    await subscribe("E2");
    // E1 sorts first in the markers' order: its failure comes before E2 in every turn.
    const badId = await unreadable("E1");
    await Promise.all(Array.from({ length: 50 }, (_, i) => suite.store.outbox.put(item("E2", i))));
    // An event left by a process that is gone (its subscription gone since): taken up after the
    // outbox.
    await suite.store.repository(activeRepo).put("T1:E3", { since: Date.now() });
    countPages();
    // When each turn began: the back-off counts from the turn's clock, read as it begins, not
    // from when E1's listing began (after the turn's other reads, slow under load).
    const turns: number[] = [];
    const e = start({}, { reading: () => turns.push(Date.now()) });
    await eventually(
      async () => ((await left("E2")) === 0 ? true : undefined),
      "E2 drained past E1's failure",
      5_000,
    );
    expect((await e.figures("T1", "E2"))?.unique).toBe(50);
    // Taken up (markers), found to have no subscription and let go (housekeeping): its marker
    // deleted. Both come after the events' turns.
    await eventually(
      async () => ((await suite.store.repository(activeRepo).get("T1:E3")) ? undefined : true),
      "E3's marker taken up and let go",
      5_000,
    );
    // E1's record stays as it was, and so does its marker: nothing acknowledged is dropped.
    const kept = await suite.store.repository(outboxBatchRepo).get(badId);
    expect(kept?.items).toHaveLength(1);
    expect((await suite.store.outbox.work()).map((w) => w.eventId)).toContain("E1");
    // Logged with the event and what failed, never as the turn.
    const logged = failures("E1");
    expect(logged.length).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify(logged[0])).toContain("does not match its schema");
    expect(lines.filter((l) => String(l.msg).includes("outbox turn failed"))).toEqual([]);
    // Tried again after the back-off, 1 s and then 2 s (turns come every 20–50 ms here), and
    // logged once a try.
    await eventually(
      async () => ((pages.get("E1")?.length ?? 0) >= 3 ? true : undefined),
      "E1's third try",
      6_000,
    );
    // Each try by the start of the turn that made it.
    const turnOf = (at: number) => turns.filter((t) => t <= at).at(-1) ?? 0;
    const [first = 0, second = 0, third = 0] = (pages.get("E1") ?? []).map(turnOf);
    expect(second - first).toBeGreaterThanOrEqual(900);
    expect(second - first).toBeLessThan(1_900);
    expect(third - second).toBeGreaterThanOrEqual(1_900);
    expect(third - second).toBeLessThan(2_900);
    // A try is counted as its listing begins, and logged once the listing has failed: wait for
    // the third try's line (the fourth try is 4 s away).
    const tries = pages.get("E1")?.length ?? 0;
    await eventually(
      () => (failures("E1").length >= tries ? true : undefined),
      "every try logged",
      2_000,
    );
    expect(failures("E1").length).toBe(tries);
    await suite.store.deleteMany([suite.store.repository(outboxBatchRepo).key(badId)]);
  }, 20_000);

  it("marks an unmarked event's record in its sweep past another event's unreadable one", async () => {
    await subscribe("E7");
    // EA sorts before E7: its first record cannot be read, and it has its marker.
    const badId = await unreadable("EA0");
    // E7's record alone, its marker lost (a write that failed after the record's).
    const good = `T1:E7:${timeOrderedId()}`;
    await suite.store.repository(outboxBatchRepo).put(good, { items: [item("E7", 1)] });
    const e = start({ sweepMs: 100 });
    await eventually(
      async () => ((await left("E7")) === 0 ? true : undefined),
      "E7 marked by the sweep and drained",
      5_000,
    );
    expect((await e.figures("T1", "E7"))?.unique).toBe(1);
    // Found by the sweep (logged as such), which did not fail on EA0's record.
    expect(
      lines.filter((l) => l.event === "E7" && String(l.msg).includes("with no marker")),
    ).toHaveLength(1);
    expect(lines.filter((l) => String(l.msg).includes("the sweep"))).toEqual([]);
    await suite.store.deleteMany([suite.store.repository(outboxBatchRepo).key(badId)]);
  }, 20_000);

  it("goes on with every other event past a marker it cannot read, and writes that marker again", async () => {
    await subscribe("EB");
    await subscribe("EC");
    const markers = suite.store.repository(outboxWorkRepo);
    // EB0 sorts first among the markers: its marker fails its schema (`last` is a string), and
    // its record is there. EB1's marker is as bad, and it has no record left.
    const record = `T1:EB0:${timeOrderedId()}`;
    await suite.store.repository(outboxBatchRepo).put(record, { items: [item("EB0", 1)] });
    await subscribe("EB0");
    await suite.store.set(markers.key("T1:EB0"), { last: 7, at: Date.now() });
    await suite.store.set(markers.key("T1:EB1"), { last: 7, at: Date.now() });
    await Promise.all(Array.from({ length: 20 }, (_, i) => suite.store.outbox.put(item("EC", i))));
    // A long sweep: EB0 is not marked again by the sweep, but by the turn that read its marker.
    const e = start({ sweepMs: 60_000 });
    await eventually(
      async () => ((await left("EC")) + (await left("EB0")) === 0 ? true : undefined),
      "EC drained past EB0's marker, and EB0 after it was written again",
      5_000,
    );
    expect((await e.figures("T1", "EC"))?.unique).toBe(20);
    expect((await e.figures("T1", "EB0"))?.unique).toBe(1);
    // EB1's marker, with no record left, was written again already stale, and cleared at the
    // event's next turn (not after STALE_MARK_MS, 30 s).
    await eventually(
      async () => ((await markers.get("T1:EB1")) ? undefined : true),
      "EB1's marker cleared",
      3_000,
    );
    const said = lines.filter((l) => String(l.msg).includes("marker could not be read"));
    expect(said.map((l) => l.event).sort()).toEqual(["EB0", "EB1"]);
    expect(lines.filter((l) => String(l.msg).includes("outbox turn failed"))).toEqual([]);
    await e.stop();
  }, 20_000);

  it("drains items of earlier versions event by event past one whose live record cannot be read", async () => {
    await subscribe("EL");
    await subscribe("EM");
    // Keyed by sequence alone (earlier versions), EL's first: its live record fails its schema.
    const lives = suite.store.repository(liveRepo);
    await suite.store.set(lives.key("T1:EL"), { not: "a live record" });
    const legacy = suite.store.repository(outboxRepo);
    const elId = timeOrderedId(Date.now() - 2_000);
    await legacy.put(elId, item("EL", 1));
    await legacy.put(timeOrderedId(Date.now() - 1_000), item("EM", 1));
    const e = start();
    await eventually(
      async () => ((await legacy.list()).length === 1 ? true : undefined),
      "EM's item drained past EL's",
      5_000,
    );
    expect((await e.figures("T1", "EM"))?.unique).toBe(1);
    expect((await legacy.list()).map((r) => r.id)).toEqual([elId]);
    expect(failures("EL").length).toBeGreaterThanOrEqual(1);
    await e.stop();
    await suite.store.deleteMany([lives.key("T1:EL"), legacy.key(elId)]);
  }, 20_000);

  it("looks for items of earlier versions again at the next turn after the store failed", async () => {
    await subscribe("EN");
    const legacy = suite.store.repository(outboxRepo);
    await legacy.put(timeOrderedId(Date.now() - 1_000), item("EN", 1));
    let calls = 0;
    const original = suite.store.outbox.listLegacy;
    suite.store.outbox.listLegacy = async (limit) => {
      calls++;
      if (calls === 1) {
        throw new StoreError(STORE_ERROR_CODES.unavailable, "list", "sqlite", undefined, "down");
      }
      return original.call(suite.store.outbox, limit);
    };
    restore.push(() => {
      suite.store.outbox.listLegacy = original;
    });
    const e = start();
    // Not a minute later (the wait after a failure of the listing's own).
    await eventually(
      async () => ((await legacy.list()).length === 0 ? true : undefined),
      "EN's item drained soon after the store came back",
      3_000,
    );
    expect(calls).toBeGreaterThanOrEqual(2);
    expect((await e.figures("T1", "EN"))?.unique).toBe(1);
  }, 20_000);

  it("applies an event's items once its record can be read again", async () => {
    await subscribe("E4");
    const badId = await unreadable("E4");
    countPages();
    start();
    await eventually(async () => (failures("E4").length > 0 ? true : undefined), "E4 failing");
    // Mended (an operator's fix, a newer version's record read): replaced by a good one.
    await suite.store.repository(outboxBatchRepo).put(badId, { items: [item("E4", 7)] });
    await eventually(
      async () => ((await left("E4")) === 0 ? true : undefined),
      "E4 drained after the back-off",
      5_000,
    );
    expect((await suite.engine?.figures("T1", "E4"))?.unique).toBe(1);
  }, 20_000);

  it("still fails the whole turn when the store itself fails", async () => {
    await subscribe("E5");
    await subscribe("E6");
    await Promise.all(Array.from({ length: 5 }, (_, i) => suite.store.outbox.put(item("E5", i))));
    await Promise.all(Array.from({ length: 5 }, (_, i) => suite.store.outbox.put(item("E6", i))));
    // E5's listing finds the store down: E6, after it, is not tried in that turn either.
    let down = true;
    const original = suite.store.outbox.eventPage;
    suite.store.outbox.eventPage = async (team, eventId, limit) => {
      if (eventId === "E5" && down) {
        down = false;
        throw new StoreError(STORE_ERROR_CODES.unavailable, "list", "sqlite", undefined, "down");
      }
      return original.call(suite.store.outbox, team, eventId, limit);
    };
    restore.push(() => {
      suite.store.outbox.eventPage = original;
    });
    const e = start();
    await eventually(
      async () => ((await left("E5")) + (await left("E6")) === 0 ? true : undefined),
      "both drained once the store is back",
      5_000,
    );
    expect(lines.filter((l) => String(l.msg).includes("outbox turn failed"))).toHaveLength(1);
    // Not put aside as E5's own failure: tried again at the next turn, not after a back-off.
    expect(failures("E5")).toEqual([]);
    expect((await e.figures("T1", "E5"))?.unique).toBe(5);
  }, 20_000);
});
