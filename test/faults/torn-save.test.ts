import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sqlite3 from "sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeSessions } from "../../src/live/state.ts";
import { eventually, freePort } from "../helpers/live-fixtures.ts";
import { expectExactCounts, type LiveStage, startLiveStage } from "../helpers/live-stage.ts";

/**
 * A save is two writes: the chunks of sessions, then the event's live record (figures and the
 * notices not yet posted). A process that dies between them must leave a state the next owner
 * reads as the earlier save, whole: if it read the new sessions with the old record, replaying
 * the outbox would find every attendee already counted and announce nobody, and the digests
 * would stay short of the card for good (seen once on CI after a kill -9 mid-burst).
 *
 * The window is made as wide as needed with a trigger in the SQLite file that refuses writes of
 * the live record: the chunks land, the record does not, and the app is killed there.
 */

const dir = mkdtempSync(join(tmpdir(), "onair-torn-save-"));
const path = join(dir, "onair.sqlite");
let stage: LiveStage;
let env: Record<string, string>;

function exec(sql: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(path, (open) => {
      if (open) return reject(open);
      db.exec(sql, (err) => db.close(() => (err ? reject(err) : resolve())));
    });
  });
}

function rows(like: string): Promise<Array<{ key: string; value: string }>> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(path, (open) => {
      if (open) return reject(open);
      db.all<{ key: string; value: string }>(
        "SELECT key, value FROM keyv WHERE key LIKE ?",
        [like],
        (err, found) => db.close(() => (err ? reject(err) : resolve(found))),
      );
    });
  });
}

/** The most attendees any stored chunk of sessions holds. */
async function largestChunk(): Promise<number> {
  const found = await rows("live-sessions:%");
  const sizes = found.map((r) => decodeSessions((JSON.parse(r.value) as { value: string }).value));
  return Math.max(0, ...sizes.map((s) => s.length));
}

beforeAll(async () => {
  stage = await startLiveStage({ title: "Torn save town hall", storeUrl: `sqlite://${path}` });
  env = stage.childEnv({ port: await freePort(), logLevel: "info" });
}, 30_000);

afterAll(async () => {
  await stage?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("kill -9 between a save's chunks and its record", () => {
  it("the next owner announces every attendee once", async () => {
    const { event } = stage;
    const control = stage.sandbox.sandbox.control;
    const first = await stage.spawn(env);
    const ts = await stage.notify(first.origin);
    await control.setState(event.eventId, { state: "IN_EVENT" });
    expect((await control.attendees(event.eventId, { count: 3 })).delivered).toBe(3);
    await expectExactCounts(
      stage,
      ts,
      { joined: 3, left: 0, now: 3, peak: 3, unique: 3 },
      "before the fault",
    );

    // From here the live record cannot be written; everything else can.
    await exec(`
      CREATE TABLE torn(armed INTEGER);
      INSERT INTO torn VALUES (1);
      CREATE TRIGGER torn_insert BEFORE INSERT ON keyv
        WHEN NEW.key LIKE 'live:%' AND (SELECT armed FROM torn) = 1
        BEGIN SELECT RAISE(ABORT, 'the live record does not land'); END;
      CREATE TRIGGER torn_update BEFORE UPDATE ON keyv
        WHEN NEW.key LIKE 'live:%' AND (SELECT armed FROM torn) = 1
        BEGIN SELECT RAISE(ABORT, 'the live record does not land'); END;
    `);
    expect((await control.attendees(event.eventId, { count: 2 })).delivered).toBe(2);
    // The turn that applies them wrote its chunk (all five in it) and failed at the record.
    await eventually(
      async () =>
        (await largestChunk()) === 5 &&
        first.output.join("").includes("the live record does not land")
          ? true
          : undefined,
      "a chunk of five stored and the record refused",
      20_000,
    );
    await first.kill();
    await exec("UPDATE torn SET armed = 0;");

    const second = await stage.spawn(env);
    stage.emulator.setAppUrl(second.origin);
    await expectExactCounts(
      stage,
      ts,
      { joined: 5, left: 0, now: 5, peak: 5, unique: 5 },
      "after the restart",
      45_000,
    );
    // What the dead process wrote and no record names is gone, and the version the restart
    // replaced too (after a grace, or when the quiet event is let go): one chunk is left.
    await eventually(
      async () => ((await rows("live-sessions:%")).length === 1 ? true : undefined),
      "the chunk versions nobody names deleted",
      30_000,
    );
  }, 120_000);
});
