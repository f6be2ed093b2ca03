import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll } from "vitest";
import { LiveEngine, type LiveEngineOptions } from "../../src/live/engine.ts";
import type { Logger } from "../../src/log.ts";
import { createMetrics } from "../../src/metrics.ts";
import { createCipher, openStore, type Store } from "../../src/store/index.ts";

/**
 * What the live engine's outbox tests share: a SQLite file of their own, an engine on it with no
 * Slack, attendee joins of one event (team T1), each a new attendee, and the subscription that
 * has them applied (a card in one channel).
 */

/** Attendee `i` joining `eventId`, as the webhook route stores it. */
export function joinItem(eventId: string, i: number) {
  return {
    team: "T1",
    subscriptionId: `sub-${eventId}`,
    eventId,
    receivedAt: i,
    message: {
      type: "ATTENDEE_INFO",
      eventId,
      instanceId: "i1",
      info: {
        endpointGuid: `guid-${i}`,
        endpointType: "web",
        infoType: "JOIN",
        joinTime: 1_000 + i,
        name: `Attendee ${i}`,
      },
    },
  };
}

/** The event's subscription (`sub-{eventId}`), so that its items are applied. */
export async function subscribeEvent(store: Store, eventId: string): Promise<void> {
  await store.subscriptions.put(`sub-${eventId}`, {
    team: "T1",
    eventId,
    channels: ["C0EVENTS"],
    secretSha256: "0".repeat(64),
    types: ["EVENT_STATE", "ATTENDEE_INFO"],
    noise: "counter",
    createdAt: Date.now(),
  });
}

/**
 * For the suite it is called in: a SQLite file opened before its tests and removed after them,
 * and `start`, an engine on it (stopped after each test) that never reaches Slack.
 */
export function engineSuite(name: string, logger: Logger, defaults: LiveEngineOptions) {
  const dir = mkdtempSync(join(tmpdir(), `onair-${name}-`));
  const suite = {
    store: undefined as unknown as Store,
    engine: undefined as LiveEngine | undefined,
    /** The SQLite file, for a test that reaches it with the driver (a fault of its own). */
    path: join(dir, "s.sqlite"),
  };
  beforeAll(async () => {
    suite.store = await openStore(`sqlite://${suite.path}`, {
      cipher: createCipher(randomBytes(32)),
      sweepIntervalMs: 0,
    });
  });
  afterEach(async () => {
    await suite.engine?.stop();
    suite.engine = undefined;
  });
  afterAll(async () => {
    await suite.store?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  /** `reading`: told as each of the engine's turns begins (just before it reads its clock). */
  const start = (
    options: LiveEngineOptions = {},
    { reading }: { reading?: () => void } = {},
  ): LiveEngine => {
    const e = new LiveEngine(
      {
        store: suite.store,
        logger,
        bulkClient: () => Promise.reject(new Error("no Slack in this test")),
        now: () => Date.now(),
        onClose: () => undefined,
        metrics: createMetrics(),
        ...(reading ? { reading } : {}),
      },
      { ...defaults, ...options },
    );
    e.start();
    suite.engine = e;
    return e;
  };
  return { suite, start };
}
