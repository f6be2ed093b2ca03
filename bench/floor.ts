import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import { createCipher, openStore, timeOrderedId } from "../src/store/index.ts";
import { listen, load, mainThreadCpuMicros } from "./run.ts";

/**
 * The floor under issue 13's ingest bars: bare node:http (the same JSON.parse) that stores each
 * message through the store's own grouped write (kv.ts → group.ts → the backend's one statement
 * or script) and answers 204 once its group has committed. Nothing else: no subscription, no
 * secret, no content checks, no schema, no live engine. Whatever the route does costs at least
 * this; where the floor itself misses a bar, no route that stores before it answers can meet it
 * on this machine with this store.
 *
 * The floor's keys live in a namespace of their own (`benchfloor:`), so the app beside it in the
 * same store never reads them.
 */
export interface FloorResult {
  perSec: number;
  p50: number;
  p99: number;
  sent: number;
  failed: number;
  /** Process CPU µs per message (every thread: libuv's pool too). */
  cpu: number;
  /** The serving thread's own CPU µs per message. */
  thread: number;
  /** The serving thread's event-loop busy µs per message (as the route's busy row). */
  busy: number;
}

export async function floorIngest(
  storeUrl: string,
  count: number,
  concurrency: number,
  extra: Record<string, unknown> = {},
): Promise<FloorResult> {
  const store = await openStore(storeUrl, {
    cipher: createCipher(randomBytes(32)),
    namespace: "benchfloor",
    sweepIntervalMs: 0,
    // As the route's store: no checkpoint in its commits (the floor is the most favourable case).
    sqliteCheckpoints: "elsewhere",
  });
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const message = JSON.parse(Buffer.concat(chunks).toString());
      store.set(`outbox:${timeOrderedId()}`, { receivedAt: Date.now(), message }).then(
        () => res.writeHead(204).end(),
        () => res.writeHead(503).end(),
      );
    });
  });
  const url = await listen(server);
  try {
    const plan = { kind: "webhook", url: `${url}/webhooks/events/x`, concurrency };
    // Warm the store's statements and both sides' code outside the measured run.
    await load({ ...plan, count: 2_000, offset: 3_000_000 });
    const cpu0 = process.cpuUsage();
    const thread0 = mainThreadCpuMicros() ?? Number.NaN;
    const elu = performance.eventLoopUtilization();
    const r = await load({ ...plan, count, ...extra, offset: 4_000_000 });
    const cpu = process.cpuUsage(cpu0);
    const busy = performance.eventLoopUtilization(elu).active * 1000;
    const thread = (mainThreadCpuMicros() ?? Number.NaN) - thread0;
    return {
      perSec: r.perSec,
      p50: r.p50,
      p99: r.p99,
      sent: r.sent,
      failed: r.failed,
      cpu: (cpu.user + cpu.system) / r.sent,
      thread: thread / r.sent,
      busy: busy / r.sent,
    };
  } finally {
    server.close();
    await store.deletePrefix("outbox:").catch(() => 0);
    await store.close();
  }
}
