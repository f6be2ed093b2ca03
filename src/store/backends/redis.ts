import KeyvRedis from "@keyv/redis";
import { createClient } from "@redis/client";
import { Keyv } from "keyv";
import { causeText } from "../errors.ts";
import { type Backend, type BackendOptions, KEYV_OPTIONS, type ScanOptions } from "./types.ts";

/**
 * Redis: the engine for several instances behind a load balancer. Values carry a native TTL
 * (keyv passes it as PX), claims are `SET NX PX`, listing is SCAN MATCH.
 *
 * The client is ours, handed to @keyv/redis, so that a Redis outage surfaces as errors:
 * - the first connection must succeed (openStore fails clearly otherwise);
 * - afterwards it reconnects with backoff, and while it is down every command is rejected at
 *   once (`disableOfflineQueue`) rather than queued until a request times out;
 * - @keyv/redis swallows errors unless `throwOnErrors` is set.
 */

const SCAN_COUNT = 1000;
const MGET_CHUNK = 500;

/** Glob characters in a prefix must match literally. */
function globEscape(s: string): string {
  return s.replace(/[*?[\]\\]/g, "\\$&");
}

export function redisLabel(url: string): string {
  try {
    const u = new URL(url);
    return `redis ${u.host}${u.pathname && u.pathname !== "/" ? u.pathname : ""}`;
  } catch {
    return "redis";
  }
}

export async function openRedis(url: string, opts: BackendOptions): Promise<Backend> {
  let everConnected = false;
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: opts.connectTimeoutMs,
      // Give up on the first connection (so openStore reports it); after that, keep trying.
      reconnectStrategy: (retries: number, cause: Error) =>
        everConnected ? Math.min(100 * 2 ** Math.min(retries, 5), 3_000) : cause,
    },
  });
  let lastLogged = 0;
  client.on("error", (err: unknown) => {
    // Reconnect attempts repeat the same error; once per 10 s is enough for an operator.
    const now = Date.now();
    if (now - lastLogged > 10_000) {
      lastLogged = now;
      opts.logger?.warn({ store: redisLabel(url), reason: causeText(err) }, "redis store error");
    }
  });
  await client.connect();
  everConnected = true;

  const adapter = new KeyvRedis(client, {
    throwOnErrors: true,
    throwOnConnectError: true,
    useUnlink: true,
  });
  // Errors are thrown to callers; this listener only keeps the emitter from throwing twice.
  adapter.on("error", () => {});
  const keyv = new Keyv({ ...KEYV_OPTIONS, store: adapter });

  async function scanKeys(prefix: string): Promise<string[]> {
    const found = new Set<string>();
    let cursor = "0";
    do {
      const r = await client.scan(cursor, { MATCH: `${globEscape(prefix)}*`, COUNT: SCAN_COUNT });
      cursor = String(r.cursor);
      // SCAN may return a key more than once.
      for (const k of r.keys) found.add(String(k));
    } while (cursor !== "0");
    return [...found];
  }

  async function unlink(keys: readonly string[]): Promise<number> {
    let n = 0;
    for (let i = 0; i < keys.length; i += MGET_CHUNK) {
      n += await client.unlink(keys.slice(i, i + MGET_CHUNK) as string[]);
    }
    return n;
  }

  return {
    kind: "redis",
    label: redisLabel(url),
    keyv,
    async scan(prefix: string, o: ScanOptions) {
      const keys = (await scanKeys(prefix)).sort(byCodePoint);
      if (o.reverse) keys.reverse();
      const wanted = o.limit === undefined ? keys : keys.slice(0, o.limit);
      const out: Array<[string, string]> = [];
      for (let i = 0; i < wanted.length; i += MGET_CHUNK) {
        const part = wanted.slice(i, i + MGET_CHUNK);
        const values = await client.mGet(part);
        values.forEach((v, j) => {
          // Expired or deleted between SCAN and MGET.
          if (v !== null) out.push([part[j]!, String(v)]);
        });
      }
      return out;
    },
    deleteKeys: (keys) => (keys.length === 0 ? Promise.resolve(0) : unlink(keys)),
    async deletePrefix(prefix) {
      return unlink(await scanKeys(prefix));
    },
    async claim(key, raw, ttlMs) {
      const r = await client.set(key, raw, {
        condition: "NX",
        expiration: { type: "PX", value: ttlMs },
      });
      return r === "OK";
    },
    sweep: async () => 0,
    async ping() {
      await client.ping();
    },
    async close() {
      // close() waits for the replies of commands in flight; with the server gone there is
      // nothing to wait for.
      if (client.isReady) await client.close();
      else if (client.isOpen) client.destroy();
    },
  };
}

/** Same order as the SQL backends' byte order (UTF-16 sort differs above U+FFFF only). */
function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
