import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCipher, openStore, type Store } from "../../src/store/index.ts";
import { CHANNELS, TEAM } from "../helpers/app-harness.ts";
import { eventually, freePort } from "../helpers/live-fixtures.ts";
import { type LiveStage, startLiveStage } from "../helpers/live-stage.ts";
import { HAVE_POSTGRES_CLUSTER, type OwnServer, startPostgresCluster } from "../helpers/servers.ts";
import {
  guidOf,
  postJoin,
  seedWebhookTarget,
  storedGuids,
  type WebhookTarget,
} from "../helpers/webhook-target.ts";

/**
 * kill -9 of the app (a child process) in the narrowest window of group commit: the group's
 * write has committed on the server and the app has not yet acknowledged any of its messages.
 * Made exact on a PostgreSQL cluster of the test's own: the test holds the table's write lock,
 * so the group's INSERT waits on the server; once it is seen waiting, the app is stopped
 * (SIGSTOP), the lock released (the server commits the INSERT; the stopped app cannot answer
 * anyone), then the app is killed. After a restart on the same store: every message
 * acknowledged before is counted, and the group committed but never acknowledged is applied too
 * (at least once; a sender's retry of it would change nothing).
 */

const REQUIRE = process.env.ONAIR_REQUIRE_SERVICES === "1";
const BEFORE = 20;
const GROUP = 10;

describe.skipIf(!HAVE_POSTGRES_CLUSTER && !REQUIRE)("kill -9 between commit and ack", () => {
  let server: OwnServer;
  let stage: LiveStage;
  let store: Store;
  let target: WebhookTarget;
  /** Holds the lock. */
  let db: pg.Client;
  /** Watches the server: outside db's transaction, which would see one snapshot of the activity. */
  let watch: pg.Client;
  let env: Record<string, string>;

  beforeAll(async () => {
    server = await startPostgresCluster();
    stage = await startLiveStage({ title: "Killed after commit", storeUrl: server.url });
    store = await openStore(server.url, { cipher: createCipher(stage.key), sweepIntervalMs: 0 });
    target = await seedWebhookTarget(store, {
      team: TEAM,
      eventId: stage.event.eventId,
      channel: CHANNELS.events,
    });
    db = new pg.Client({ connectionString: server.url });
    await db.connect();
    watch = new pg.Client({ connectionString: server.url });
    await watch.connect();
    // A fixed port: the restarted process is reached at the same address.
    env = stage.childEnv({ port: await freePort(), logLevel: "warn" });
  }, 60_000);
  afterAll(async () => {
    await db?.end().catch(() => undefined);
    await watch?.end().catch(() => undefined);
    await store?.close().catch(() => undefined);
    await stage?.close();
    await server?.stop();
  });

  /** Backends of other clients waiting on a lock while inserting into the store's table. */
  async function waitingInserts(): Promise<number> {
    const r = await watch.query<{ n: string }>(
      `SELECT count(*) AS n FROM pg_stat_activity
        WHERE pid <> pg_backend_pid() AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO keyv%'`,
    );
    return Number(r.rows[0]?.n ?? 0);
  }

  it("loses no acknowledged message, and applies the committed group after a restart", async () => {
    const first = await stage.spawn(env);
    for (let n = 0; n < BEFORE; n++) expect(await postJoin(first.origin, target, n)).toBe(204);
    const acked = Array.from({ length: BEFORE }, (_, n) => guidOf(n));
    // Applied by the worker: it writes nothing more until it lets the event go, 10 s idle later,
    // so the next write to reach the server is the webhook group's.
    await eventually(async () => {
      const s = await storedGuids(store, target.team, target.eventId);
      const drained = (await store.outbox.list(1)).length === 0;
      return drained && acked.every((g) => s.has(g)) ? true : undefined;
    }, "the first messages applied");

    await db.query("BEGIN");
    await db.query("LOCK TABLE keyv IN SHARE ROW EXCLUSIVE MODE");
    const sent = Array.from({ length: GROUP }, (_, i) => postJoin(first.origin, target, 100 + i));
    try {
      await eventually(async () => ((await waitingInserts()) > 0 ? true : undefined), "the group");
      first.proc.kill("SIGSTOP");
    } finally {
      await db.query("COMMIT");
    }
    // The server commits the group the stopped app sent; nobody is told.
    // Every group the stopped app had sent: none waiting, and the count steady (a group still
    // in transit when the app stopped reaches the server a moment later).
    let seen = -1;
    const committed = await eventually(async () => {
      if ((await waitingInserts()) > 0) return undefined;
      const rows = await store.outbox.list();
      const steady = rows.length > 0 && rows.length === seen;
      seen = rows.length;
      if (!steady) await new Promise((r) => setTimeout(r, 300));
      return steady ? rows : undefined;
    }, "the group committed");
    await first.kill();
    const statuses = await Promise.all(sent);
    // None acknowledged: the kill came between the commit and the answers.
    expect(statuses.filter((s) => s >= 200 && s < 300)).toEqual([]);
    const committedGuids = committed.map(
      (r) => (r.item.message as { info: { endpointGuid: string } }).info.endpointGuid,
    );
    expect(committedGuids.length).toBeGreaterThan(0);

    const second = await stage.spawn(env);
    // The restarted worker takes the event over once the dead one's lease has run out.
    const final = await eventually(
      async () => {
        const s = await storedGuids(store, target.team, target.eventId);
        const drained = (await store.outbox.list(1)).length === 0;
        return drained ? s : undefined;
      },
      "the committed group applied",
      30_000,
    );
    expect(acked.filter((g) => !final.has(g))).toEqual([]);
    expect(committedGuids.filter((g) => !final.has(g))).toEqual([]);
    // Nothing else appeared: exactly what was acknowledged and what was committed.
    expect([...final].sort()).toEqual([...acked, ...committedGuids].sort());
    // And the restarted app takes new messages.
    expect(await postJoin(second.origin, target, 500)).toBe(204);
  }, 120_000);
});
