import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Ingest } from "../../src/live/ingest.ts";
import { createLogger } from "../../src/log.ts";
import { createCipher, hashWebhookSecret, openStore, type Store } from "../../src/store/index.ts";

/**
 * Admission before the body is read, on a real SQLite store: the first message of a
 * subscription reads it (a promise); while it is cached, messages are answered at once (no
 * promise, no turn of the queue) with the same checks; a store that fails is a 503 with a
 * retry, never a 404. Logged lines never hold the secret.
 */
describe("Ingest.admit", () => {
  const dir = mkdtempSync(join(tmpdir(), "onair-admit-"));
  const SECRET = "a-webhook-secret-of-some-length";
  const ID = "subscription-id-000000001";
  const lines: string[] = [];
  const logger = createLogger({
    level: "debug",
    destination: new Writable({
      write: (c, _e, cb) => {
        lines.push(String(c));
        cb();
      },
    }),
  });
  let store: Store;
  let ingest: Ingest;
  const facts = (secret = SECRET) => ({
    secret,
    contentType: "application/json",
    declaredLength: 200,
  });
  beforeAll(async () => {
    store = await openStore(`sqlite://${join(dir, "s.sqlite")}`, {
      cipher: createCipher(randomBytes(32)),
      sweepIntervalMs: 0,
    });
    await store.subscriptions.put(ID, {
      team: "T1",
      eventId: "E1",
      channels: ["C1"],
      secretSha256: hashWebhookSecret(SECRET),
      types: ["ATTENDEE_INFO", "EVENT_STATE"],
      noise: "digest",
      createdAt: Date.now(),
    });
    ingest = new Ingest({ store, logger, now: () => Date.now() }, () => {});
  });
  afterAll(async () => {
    await store?.close().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  });

  it("reads the subscription once, then answers from the cache at once, with every check", async () => {
    const first = ingest.admit(ID, facts());
    expect(first).toBeInstanceOf(Promise);
    expect(await first).toMatchObject({ ok: true, subscriptionId: ID });

    const cached = ingest.admit(ID, facts());
    expect(cached).not.toBeInstanceOf(Promise);
    expect(cached).toMatchObject({ ok: true, subscriptionId: ID, sub: { eventId: "E1" } });

    expect(ingest.admit(ID, facts("wrong"))).toMatchObject({ ok: false, status: 401 });
    expect(ingest.admit(ID, { ...facts(), contentType: "text/plain" })).toMatchObject({
      ok: false,
      status: 415,
    });
    expect(ingest.admit(ID, { ...facts(), declaredLength: 10_000_000 })).toMatchObject({
      ok: false,
      status: 413,
    });
    expect(ingest.admit("../etc", facts())).toMatchObject({ ok: false, status: 404 });

    // Forgotten (a local mute or cancel): read again.
    ingest.forget(ID);
    expect(ingest.admit(ID, facts())).toBeInstanceOf(Promise);
  });

  it("answers 503 with a retry when the store fails, and logs no secret", async () => {
    const other = "subscription-id-000000002";
    await store.close();
    const answer = await ingest.admit(other, facts());
    expect(answer).toMatchObject({ ok: false, status: 503, outcome: "store_error", retryAfter: 1 });
    expect(lines.join("")).toContain("subscription lookup failed");
    expect(lines.join("")).not.toContain(SECRET);
  });
});
