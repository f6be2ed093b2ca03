import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { EventsError } from "../../src/upstream/errors.ts";
import { createEventsClient, type EventsClient } from "../../src/upstream/events/client.ts";
import {
  type CachedToken,
  createMemoryTokenCache,
  createTokenManager,
  type TokenCache,
  userTokenKey,
} from "../../src/upstream/events/tokens.ts";
import { startUpstreamHarness, type UpstreamHarness } from "./upstream-harness.ts";

const APP = { clientId: "sandbox-key", clientSecret: "sandbox-secret" };
const TOKEN_PATH = "/api/security/v1/oauth/accesstoken";
const TEAM = "T-tokens-suite";

let h: UpstreamHarness;
let events: EventsClient;
const secrets = new Set<string>(["sandbox-secret", "stale-token-0c4e7"]);

beforeAll(async () => {
  h = await startUpstreamHarness();
  events = createEventsClient({ baseUrl: h.sandbox.eventsBaseUrl, http: h.http });
});
afterAll(() => h.close());
afterEach(() => h.clearLog());

async function grants(type = "user_app") {
  return (await h.log()).filter(
    (e) => e.path === TOKEN_PATH && e.grantType === type && e.status === 200,
  );
}

/** A cache that records what passes through it, so tests can see every token. */
function recordingCache(): TokenCache & { seen: CachedToken[] } {
  const inner = createMemoryTokenCache();
  const seen: CachedToken[] = [];
  return {
    seen,
    get: (k) => inner.get(k),
    async set(k, v) {
      seen.push(v);
      secrets.add(v.accessToken);
      await inner.set(k, v);
    },
    delete: (k) => inner.delete(k),
  };
}

describe("token manager against the sandbox", () => {
  it("200 concurrent requests for one user on a cold cache cause exactly one grant", async () => {
    const tokens = createTokenManager({ events, cache: recordingCache() });
    const all = await Promise.all(
      Array.from({ length: 200 }, () => tokens.userToken(TEAM, "crowd@example.com", APP)),
    );
    expect(new Set(all.map((t) => t.accessToken)).size).toBe(1);
    expect(all[0]).toMatchObject({ userId: expect.any(Number), enterpriseId: 1001 });
    expect(await grants()).toHaveLength(1);
  });

  it("keeps users apart and treats e-mail case as the same user", async () => {
    const tokens = createTokenManager({ events, cache: recordingCache() });
    const [a, b, a2] = await Promise.all([
      tokens.userToken(TEAM, "ann@example.com", APP),
      tokens.userToken(TEAM, "bob@example.com", APP),
      tokens.userToken(TEAM, "Ann@Example.com", APP),
    ]);
    expect(a.accessToken).toBe(a2.accessToken);
    expect(a.userId).not.toBe(b.userId);
    expect(await grants()).toHaveLength(2);
  });

  it("serves from the cache, and grants again inside the refresh margin", async () => {
    let clock = Date.now();
    const tokens = createTokenManager({
      events,
      cache: recordingCache(),
      now: () => clock,
      refreshMarginMs: 60_000,
    });
    const first = await tokens.userToken(TEAM, "clock@example.com", APP);
    expect(first.expiresAt).toBe(clock + 3600 * 1000);
    clock += 3600 * 1000 - 61_000;
    expect((await tokens.userToken(TEAM, "clock@example.com", APP)).accessToken).toBe(
      first.accessToken,
    );
    clock += 2_000;
    const renewed = await tokens.userToken(TEAM, "clock@example.com", APP);
    expect(renewed.accessToken).not.toBe(first.accessToken);
    expect(await grants()).toHaveLength(2);
  });

  it("grants and caches an enterprise token once", async () => {
    const tokens = createTokenManager({ events, cache: recordingCache() });
    const [x, y] = await Promise.all([
      tokens.enterpriseToken(TEAM, APP),
      tokens.enterpriseToken(TEAM, APP),
    ]);
    expect(x.accessToken).toBe(y.accessToken);
    expect(x.userId).toBeUndefined();
    expect(await grants("enterprise_app")).toHaveLength(1);
  });

  it("on a 401, drops the token, grants once more and retries once", async () => {
    const cache = recordingCache();
    const key = userTokenKey(TEAM, "stale@example.com");
    const real = await events.grantUserApp({ ...APP, email: "stale@example.com" });
    secrets.add(real.accessToken);
    await cache.set(key, {
      accessToken: "stale-token-0c4e7",
      expiresAt: Date.now() + 3600_000,
      userId: real.userId,
      enterpriseId: 1001,
    });
    await h.clearLog();
    const tokens = createTokenManager({ events, cache });
    const { id } = await events.createEvent(real.accessToken, real.userId, {
      title: "Refresh check",
      start: Date.now() + 3600_000,
      end: Date.now() + 7200_000,
      timezone: "UTC",
    });
    const used: string[] = [];
    const title = await tokens.withUserToken(TEAM, "stale@example.com", APP, async (t) => {
      used.push(t.accessToken);
      return (await events.getEvent(t.accessToken, t.userId, id)).title;
    });
    expect(title).toBe("Refresh check");
    expect(used).toHaveLength(2);
    expect(used[0]).toBe("stale-token-0c4e7");
    expect((await cache.get(key))?.accessToken).toBe(used[1]);
    expect(await grants()).toHaveLength(1);
  });

  it("20 concurrent callers hitting the same stale token share one re-grant", async () => {
    const cache = recordingCache();
    const email = "stale-crowd@example.com";
    const real = await events.grantUserApp({ ...APP, email });
    secrets.add(real.accessToken);
    const { id } = await events.createEvent(real.accessToken, real.userId, {
      title: "Crowd check",
      start: Date.now() + 3600_000,
      end: Date.now() + 7200_000,
      timezone: "UTC",
    });
    await cache.set(userTokenKey(TEAM, email), {
      accessToken: "stale-token-0c4e7",
      expiresAt: Date.now() + 3600_000,
      userId: real.userId,
      enterpriseId: 1001,
    });
    await h.clearLog();
    const tokens = createTokenManager({ events, cache });
    const second = await Promise.all(
      Array.from({ length: 20 }, () =>
        tokens.withUserToken(TEAM, email, APP, async (t) => {
          await events.getEvent(t.accessToken, t.userId, id);
          return t.accessToken;
        }),
      ),
    );
    expect(new Set(second).size).toBe(1);
    expect(second[0]).not.toBe("stale-token-0c4e7");
    expect(await grants()).toHaveLength(1);
    const unauthorized = (await h.log()).filter((e) => e.method === "GET" && e.status === 401);
    expect(unauthorized).toHaveLength(20);
  });

  it("gives up after one renewal when the 401 persists", async () => {
    const tokens = createTokenManager({ events, cache: recordingCache() });
    let calls = 0;
    secrets.add("never-valid-88d1");
    const err = await h.failure(
      tokens.withUserToken(TEAM, "persistent@example.com", APP, async (t) => {
        calls++;
        return events.getEvent("never-valid-88d1", t.userId, "x");
      }),
    );
    expect(err).toBeInstanceOf(EventsError);
    expect((err as EventsError).status).toBe(401);
    expect(calls).toBe(2);
    expect(await grants()).toHaveLength(2);
  });

  it("passes any other error through without renewing", async () => {
    const tokens = createTokenManager({ events, cache: recordingCache() });
    const err = await h.failure(
      tokens.withUserToken(TEAM, "other@example.com", APP, (t) =>
        events.getEvent(t.accessToken, t.userId, "missing"),
      ),
    );
    expect(err).toMatchObject({ status: 404 });
    expect(await grants()).toHaveLength(1);
  });

  it("leaked no credential into any log line, error message or serialised error", () => {
    h.scanner.assertNoSecrets([...secrets]);
  });
});
