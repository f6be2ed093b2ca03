import { randomBytes, randomUUID } from "node:crypto";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventLeases } from "../../src/live/leases.ts";
import { createLogger } from "../../src/log.ts";
import { createCipher, openStore, type Store } from "../../src/store/index.ts";

/**
 * Event leases on a shared Redis. An engine that let an event go because extending its lease
 * timed out (a frozen store) may find the extension landed after all: the lease holds its own
 * id for a whole lease more. It takes it back at once instead of waiting that lease out (a
 * frozen-store test once waited past its 10 s for the outbox to drain); another engine still
 * cannot take it.
 */

const REDIS = process.env.TEST_REDIS_URL;
const required = process.env.ONAIR_REQUIRE_SERVICES === "1";
const logger = createLogger({
  level: "warn",
  destination: new Writable({ write: (_c, _e, cb) => cb() }),
});

describe.skipIf(!REDIS && !required)("event leases", () => {
  let store: Store;
  beforeAll(async () => {
    if (!REDIS) throw new Error("TEST_REDIS_URL is required (ONAIR_REQUIRE_SERVICES=1)");
    store = await openStore(REDIS, {
      cipher: createCipher(randomBytes(32)),
      namespace: `leases-${randomUUID().slice(0, 8)}`,
      sweepIntervalMs: 0,
    });
  });
  afterAll(async () => {
    await store?.deletePrefix("live-lease:").catch(() => 0);
    await store?.close();
  });

  it("are taken back by their holder, and by no one else while held", async () => {
    const mine = new EventLeases(store, logger, 10_000);
    const theirs = new EventLeases(store, logger, 10_000);
    expect(await mine.take("T1", "e1")).toBeGreaterThan(Date.now());
    // Let go here, still held in the store with this engine's id.
    expect(await mine.take("T1", "e1")).toBeGreaterThan(Date.now());
    expect(await theirs.take("T1", "e1")).toBeUndefined();
    expect(await mine.giveBack("T1", "e1")).toBe(true);
    await new Promise((r) => setTimeout(r, 20));
    expect(await theirs.take("T1", "e1")).toBeGreaterThan(Date.now());
    expect(await mine.take("T1", "e1")).toBeUndefined();
  });
});
