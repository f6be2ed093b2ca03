import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Installation } from "@slack/bolt";
import { afterAll, describe, expect, it } from "vitest";
import { LIVE_REPOSITORIES } from "../../src/live/live-record.ts";
import {
  CANARY_KEY,
  checkEncryptionKey,
  createCipher,
  DEFAULT_SETTINGS,
  EncryptionKeyError,
  openStore,
  type Settings,
  type Store,
} from "../../src/store/index.ts";
import { CORE_REPOSITORIES } from "../../src/store/records.ts";
import { rekeyStore } from "../../src/store/rekey.ts";
import { createEventsClient } from "../../src/upstream/events/client.ts";
import { createTokenManager, enterpriseTokenKey } from "../../src/upstream/events/tokens.ts";
import { installationFor } from "../helpers/store-fixtures.ts";
import { startUpstreamHarness } from "./upstream-harness.ts";

/**
 * Key rotation on a real store of each backend: a store sealed with key A, an instance started
 * with B and A beside it (ONAIR_ENCRYPTION_KEY_PREVIOUS) while another still writes, then
 * `npm run rekey`'s work: nothing lost, every secret readable with B alone afterwards.
 */

const REQUIRE = process.env.ONAIR_REQUIRE_SERVICES === "1";
const tmp = mkdtempSync(join(tmpdir(), "onair-rekey-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const BACKENDS = [
  { name: "sqlite", url: () => `sqlite://${join(tmp, `${randomUUID()}.sqlite`)}` },
  {
    name: "redis",
    url: process.env.TEST_REDIS_URL ? () => process.env.TEST_REDIS_URL! : undefined,
  },
  {
    name: "postgres",
    url: process.env.TEST_POSTGRES_URL ? () => process.env.TEST_POSTGRES_URL! : undefined,
  },
] as const;

const REPOS = [...CORE_REPOSITORIES, ...LIVE_REPOSITORIES];
const TEAMS = ["T0ROT1", "T0ROT2", "T0ROT3"];

const installation = (team: string): Installation =>
  installationFor(team, {
    bot: `xoxb-bot-${team}`,
    user: `xoxp-user-${team}`,
    refresh: `xoxe-refresh-${team}`,
  });

function settings(team: string, n = 0): Settings {
  return {
    ...structuredClone(DEFAULT_SETTINGS),
    eventsAppKey: `key-${team}`,
    eventsAppSecret: `events-secret-${team}-${n}`,
    relayUsername: `relay-${team}`,
    relayPassword: `relay-password-${team}-${n}`,
  };
}

async function open(url: string, ns: string, key: Buffer, previous: Buffer[] = []) {
  const cipher = createCipher(key, previous);
  const store = await openStore(url, { cipher, namespace: ns, sweepIntervalMs: 0 });
  return { store, cipher };
}

async function seed(store: Store): Promise<void> {
  for (const team of TEAMS) {
    await store.installations.put(team, installation(team));
    await store.settings.put(team, settings(team));
    await store.tokens.put(team, "enterprise", {
      accessToken: `upstream-token-${team}`,
      expiresAt: Date.now() + 3_600_000,
      enterpriseId: 1001,
    });
  }
}

async function expectAllReadable(store: Store, latest: Record<string, Settings>): Promise<void> {
  for (const team of TEAMS) {
    expect(await store.installations.get(team)).toEqual(installation(team));
    expect(await store.settings.get(team)).toEqual(latest[team]);
    expect((await store.tokens.get(team, "enterprise"))?.accessToken).toBe(
      `upstream-token-${team}`,
    );
  }
}

for (const backend of BACKENDS) {
  const missing = backend.url === undefined;
  describe.skipIf(missing && !REQUIRE)(`key rotation on ${backend.name}`, () => {
    const url = () => {
      if (!backend.url) throw new Error(`no ${backend.name} configured (ONAIR_REQUIRE_SERVICES=1)`);
      return backend.url();
    };

    it("refuses a wrong key at the canary, and on an older store at its first sealed record", async () => {
      const u = url();
      const ns = `rekey-${randomUUID().slice(0, 8)}`;
      const a = randomBytes(32);
      const first = await open(u, ns, a);
      await seed(first.store);
      // A store from before the canary: the check reads a sealed record instead.
      await expect(checkEncryptionKey(first.store, createCipher(randomBytes(32)))).rejects.toThrow(
        EncryptionKeyError,
      );
      expect(await first.store.get(CANARY_KEY)).toBeUndefined();
      expect(await checkEncryptionKey(first.store, first.cipher)).toBe("created");
      expect(await checkEncryptionKey(first.store, first.cipher)).toBe("current");
      const wrong = createCipher(randomBytes(32));
      const err = await checkEncryptionKey(first.store, wrong).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EncryptionKeyError);
      expect(String((err as Error).message)).toMatch(
        /^ONAIR_ENCRYPTION_KEY does not open the secrets in this store .*ONAIR_ENCRYPTION_KEY_PREVIOUS/,
      );
      expect((err as Error).message).not.toContain("\n");
      await first.store.close();
    });

    it("rotates under a running store: nothing lost, every secret readable with the new key alone", async () => {
      const u = url();
      const ns = `rekey-${randomUUID().slice(0, 8)}`;
      const a = randomBytes(32);
      const b = randomBytes(32);
      const old = await open(u, ns, a);
      await seed(old.store);
      expect(await checkEncryptionKey(old.store, old.cipher)).toBe("created");

      // The new instance: B, with A beside it. Its start re-seals the canary; its reads re-seal.
      const next = await open(u, ns, b, [a]);
      expect(await checkEncryptionKey(next.store, next.cipher)).toBe("resealed");
      const latest: Record<string, Settings> = {};
      for (const t of TEAMS) latest[t] = settings(t);
      expect(await next.store.settings.get("T0ROT1")).toEqual(latest.T0ROT1);

      // rekey while the new instance keeps writing settings: the writes win, none is lost.
      const writes = (async () => {
        for (let n = 1; n <= 20; n++) {
          const team = TEAMS[n % TEAMS.length]!;
          latest[team] = settings(team, n);
          await next.store.settings.put(team, latest[team]!);
        }
      })();
      const [report] = await Promise.all([rekeyStore(next.store, next.cipher, REPOS), writes]);
      expect(report.unreadable).toEqual([]);
      expect(report.dropped).toBe(0);
      expect(report.resealed + report.current).toBe(TEAMS.length * 3);
      // A second run finds nothing left to do.
      const again = await rekeyStore(next.store, next.cipher, REPOS);
      expect(again).toEqual({ resealed: 0, current: TEAMS.length * 3, dropped: 0, unreadable: [] });

      // Key A retired: B alone opens the canary and every secret.
      const only = await open(u, ns, b);
      expect(await checkEncryptionKey(only.store, only.cipher)).toBe("current");
      await expectAllReadable(only.store, latest);
      // And A alone no longer does: the old key is refused at start.
      await expect(checkEncryptionKey(old.store, old.cipher)).rejects.toThrow(EncryptionKeyError);
      for (const s of [old.store, next.store, only.store]) await s.close();
    });
  });
}

describe("a cached upstream token no key opens", () => {
  it("is dropped and fetched anew: the caller gets a working token, not an error", async () => {
    const up = await startUpstreamHarness();
    const u = `sqlite://${join(tmp, `${randomUUID()}.sqlite`)}`;
    const lost = await open(u, "tok", randomBytes(32));
    await lost.store.tokens.cache.set(enterpriseTokenKey("T0TOK"), {
      accessToken: "sealed-with-a-lost-key",
      expiresAt: Date.now() + 3_600_000,
      enterpriseId: 1001,
    });
    await lost.store.close();
    const now = await open(u, "tok", randomBytes(32));
    try {
      const events = createEventsClient({ baseUrl: up.sandbox.eventsBaseUrl, http: up.http });
      const tokens = createTokenManager({ events, cache: now.store.tokens.cache });
      const t = await tokens.enterpriseToken("T0TOK", {
        clientId: "sandbox-key",
        clientSecret: "sandbox-secret",
      });
      expect(t.accessToken).not.toBe("sealed-with-a-lost-key");
      expect(t.accessToken.length).toBeGreaterThan(0);
      // The fresh one is stored sealed with the current key and reads back.
      expect((await now.store.tokens.get("T0TOK", "enterprise"))?.accessToken).toBe(t.accessToken);
    } finally {
      await now.store.close();
      await up.close();
    }
  });
});
