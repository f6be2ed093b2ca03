import { EventsError } from "../errors.ts";
import type { AppCredentials, EventsClient } from "./client.ts";

export interface CachedToken {
  accessToken: string;
  /** Epoch ms. */
  expiresAt: number;
  /** Present for user tokens. */
  userId?: number | undefined;
  enterpriseId: number;
}

/**
 * Where tokens live between calls. The default is in memory; the store provides a persistent,
 * encrypted one under `token:{team}:{subject}`. Errors must propagate: a failed read is not a miss.
 */
export interface TokenCache {
  get(key: string): Promise<CachedToken | undefined>;
  set(key: string, value: CachedToken): Promise<void>;
  delete(key: string): Promise<void>;
}

export type UserToken = CachedToken & { userId: number };

export interface TokenManager {
  userToken(team: string, email: string, creds: AppCredentials): Promise<UserToken>;
  enterpriseToken(team: string, creds: AppCredentials): Promise<CachedToken>;
  /**
   * Runs fn with the user's token. On a 401 from the events service the token is dropped,
   * granted again (once, shared with concurrent callers) and fn runs a second and last time.
   */
  withUserToken<T>(
    team: string,
    email: string,
    creds: AppCredentials,
    fn: (token: UserToken) => Promise<T>,
  ): Promise<T>;
  /** Drops a user's cached token, e.g. after unlink. */
  invalidateUser(team: string, email: string): Promise<void>;
  /** Drops the enterprise token, e.g. after the app key or secret changed. */
  invalidateEnterprise(team: string): Promise<void>;
}

export interface TokenManagerOptions {
  events: Pick<EventsClient, "grantUserApp" | "grantEnterpriseApp">;
  cache?: TokenCache;
  now?: () => number;
  /** A token this close to expiry is renewed before use. Default 60 s. */
  refreshMarginMs?: number;
}

/** Cache keys: `{team}:user:{email}` and `{team}:enterprise`. E-mail compared case-insensitively. */
export function userTokenKey(team: string, email: string): string {
  return `${team}:user:${email.trim().toLowerCase()}`;
}
export function enterpriseTokenKey(team: string): string {
  return `${team}:enterprise`;
}

export function createMemoryTokenCache(): TokenCache {
  const map = new Map<string, CachedToken>();
  return {
    async get(key) {
      return map.get(key);
    },
    async set(key, value) {
      map.set(key, value);
    },
    async delete(key) {
      map.delete(key);
    },
  };
}

export function createTokenManager(options: TokenManagerOptions): TokenManager {
  const { events } = options;
  const cache = options.cache ?? createMemoryTokenCache();
  const now = options.now ?? Date.now;
  const margin = options.refreshMarginMs ?? 60_000;
  /** One grant at a time per key: concurrent callers share the same promise. */
  const inflight = new Map<string, Promise<CachedToken>>();

  const fresh = (t: CachedToken | undefined): t is CachedToken =>
    t !== undefined && t.expiresAt - margin > now();

  /**
   * One grant at a time per key. `rejected` is a token the service just refused: a cached entry
   * holding it counts as a miss. Entries are only ever overwritten, never deleted here, so a
   * slow caller cannot remove a newer token another caller just stored.
   */
  function singleFlight(
    key: string,
    grant: () => Promise<CachedToken>,
    rejected?: string,
  ): Promise<CachedToken> {
    const running = inflight.get(key);
    if (running) return running;
    const p = (async () => {
      const cached = await cache.get(key);
      if (fresh(cached) && cached.accessToken !== rejected) return cached;
      const token = await grant();
      await cache.set(key, token);
      return token;
    })().finally(() => inflight.delete(key));
    inflight.set(key, p);
    return p;
  }

  /** After a 401: join a grant already under way if it brings a new token, else force one. */
  async function renew(
    key: string,
    grant: () => Promise<CachedToken>,
    rejected: string,
  ): Promise<CachedToken> {
    const running = inflight.get(key);
    if (running) {
      const t = await running;
      if (t.accessToken !== rejected) return t;
    }
    return singleFlight(key, grant, rejected);
  }

  const grantUser = (email: string, creds: AppCredentials) => async (): Promise<CachedToken> => {
    const g = await events.grantUserApp({ ...creds, email });
    return {
      accessToken: g.accessToken,
      expiresAt: now() + g.expiresInSec * 1000,
      userId: g.userId,
      enterpriseId: g.enterpriseId,
    };
  };

  function asUserToken(t: CachedToken): UserToken {
    // Only a cache shared with other writers could hold a user entry without userId.
    if (t.userId === undefined) throw new Error("cached user token has no userId");
    return t as UserToken;
  }

  async function userToken(team: string, email: string, creds: AppCredentials): Promise<UserToken> {
    return asUserToken(await singleFlight(userTokenKey(team, email), grantUser(email, creds)));
  }

  return {
    userToken,

    enterpriseToken(team, creds) {
      return singleFlight(enterpriseTokenKey(team), async () => {
        const g = await events.grantEnterpriseApp(creds);
        return {
          accessToken: g.accessToken,
          expiresAt: now() + g.expiresInSec * 1000,
          enterpriseId: g.enterpriseId,
        };
      });
    },

    async withUserToken(team, email, creds, fn) {
      const first = await userToken(team, email, creds);
      try {
        return await fn(first);
      } catch (err) {
        if (!(err instanceof EventsError && err.status === 401)) throw err;
        const key = userTokenKey(team, email);
        const second = asUserToken(await renew(key, grantUser(email, creds), first.accessToken));
        return fn(second);
      }
    },

    async invalidateUser(team, email) {
      await cache.delete(userTokenKey(team, email));
    },

    async invalidateEnterprise(team) {
      await cache.delete(enterpriseTokenKey(team));
    },
  };
}
