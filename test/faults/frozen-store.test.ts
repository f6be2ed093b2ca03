import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { eventually } from "../helpers/live-fixtures.ts";
import {
  HAVE_POSTGRES_CLUSTER,
  HAVE_REDIS_SERVER,
  type OwnServer,
  startPostgresCluster,
  startRedisServer,
} from "../helpers/servers.ts";
import {
  guidOf,
  postJoin,
  seedWebhookTarget,
  storedGuids,
  type WebhookTarget,
} from "../helpers/webhook-target.ts";

/**
 * A store that hangs (not down: frozen with SIGSTOP, its sockets open, answering nothing), on a
 * Redis and a PostgreSQL cluster of the test's own, under the running app: the webhook route
 * answers 503 within 5 s (the request would fail past that), /readyz 503 likewise, a slash
 * command gets a plain sentence; after SIGCONT everything carries on without a restart and every
 * message acknowledged before, during or after the freeze is stored.
 */

const REQUIRE = process.env.ONAIR_REQUIRE_SERVICES === "1";
const ANSWER_WITHIN_MS = 5_000;

async function readyz(origin: string): Promise<number> {
  const res = await request(`${origin}/readyz`, { headersTimeout: ANSWER_WITHIN_MS });
  await res.body.dump();
  return res.statusCode;
}

const cases: Array<{ name: string; available: boolean; start: () => Promise<OwnServer> }> = [
  { name: "Redis", available: HAVE_REDIS_SERVER, start: startRedisServer },
  { name: "PostgreSQL", available: HAVE_POSTGRES_CLUSTER, start: startPostgresCluster },
];

for (const c of cases) {
  describe.skipIf(!c.available && !REQUIRE)(`a frozen ${c.name} under the running app`, () => {
    let server: OwnServer;
    let h: Harness;
    let target: WebhookTarget;
    let frozen = false;

    beforeAll(async () => {
      server = await c.start();
      h = await startHarness({ storeUrl: server.url, env: { LOG_LEVEL: "warn" } });
      target = await seedWebhookTarget(h.app.store, {
        team: TEAM,
        eventId: "evt-frozen-1",
        channel: CHANNELS.events,
      });
    }, 60_000);
    afterAll(async () => {
      if (frozen) server?.thaw();
      await h?.close();
      await server?.stop();
    });

    it("answers 503 within 5 s while frozen, carries on after, and loses nothing acknowledged", async () => {
      const origin = h.app.origin;
      const acked: number[] = [];
      const send = async (n: number) => {
        const status = await postJoin(origin, target, n, { timeoutMs: ANSWER_WITHIN_MS });
        if (status === 204) acked.push(n);
        return status;
      };
      for (let n = 0; n < 20; n++) expect(await send(n)).toBe(204);
      expect(await readyz(origin)).toBe(200);

      server.freeze();
      frozen = true;
      // Past the subscription cache too (1 s): the lookup and the write are both bounded.
      for (const n of [100, 101]) {
        expect(await send(n)).toBe(503);
        await new Promise((r) => setTimeout(r, 700));
      }
      // Several at once: queued behind a group stuck on the server, still answered in time.
      const burst = await Promise.all([102, 103, 104, 105].map(send));
      expect(burst).toEqual([503, 503, 503, 503]);
      expect(await readyz(origin)).toBe(503);
      const since = h.emulator.calls.length;
      const res = await h.driver.slashCommand({
        user: USERS.omar,
        channel: CHANNELS.general,
        text: "whoami",
      });
      expect(res.status).toBe(200);
      const reply = await h.emulator.waitForCall((call) => call.method === "response_url", {
        since,
        timeoutMs: 10_000,
      });
      expect(String(reply.args.text)).toMatch(/try again/i);
      expect(String(reply.args.text)).not.toMatch(/redis|postgres|timeout|store|stack/i);

      server.thaw();
      frozen = false;
      await eventually(async () => ((await readyz(origin)) === 200 ? true : undefined), "ready");
      for (let n = 200; n < 220; n++) expect(await send(n)).toBe(204);

      // Every acknowledged JOIN is stored (in the outbox or applied by the worker, which also
      // carried on); 503s may have been stored too (a write the frozen server took late), and
      // that is harmless: applying a message twice changes nothing.
      const want = acked.map(guidOf);
      const stored = await eventually(async () => {
        const s = await storedGuids(h.app.store, target.team, target.eventId);
        return want.every((g) => s.has(g)) ? s : undefined;
      }, "every acknowledged message stored");
      expect(want.filter((g) => !stored.has(g))).toEqual([]);
      expect(acked).toHaveLength(40);
      // The worker carried on too: it drains the outbox once the store answers again. A freeze
      // past the event's lease makes the worker let the event go at its next save; it takes the
      // event again once that lease has lapsed (10 s), so the drain may come that much later.
      await eventually(
        async () => ((await h.app.store.outbox.list(1)).length === 0 ? true : undefined),
        "the outbox drained",
        30_000,
      );
    }, 90_000);
  });
}
