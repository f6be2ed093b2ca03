import KeyvRedis, { createClient } from "@keyv/redis";
import { causeText } from "../errors.ts";
import { redisLabel } from "./labels.ts";
import * as scripts from "./redis-scripts.ts";
import { afterIn, type Backend, type BackendOptions } from "./types.ts";

/**
 * Redis: the engine for several instances behind a load balancer, often on a Redis shared with
 * other applications. On the official keyv adapter `@keyv/redis`, handed a client configured
 * here (the adapter's documented way to take a client) so that an outage surfaces as errors:
 * - the first connection must succeed (openStore fails clearly otherwise);
 * - afterwards it reconnects with backoff, and while it is down every command is rejected at
 *   once (`disableOfflineQueue`) rather than queued until a request times out;
 * - the adapter is told to throw (`throwOnErrors`): by default it turns a failed read into
 *   "not found";
 * - a server that accepts commands and never answers (frozen) is bounded by the store's
 *   deadline (kv.ts): node-redis's own command timeout stops applying once a command is sent.
 *
 * The adapter's `get` reads values. What it does not offer is run on the adapter's exposed
 * client (`adapter.client`), never a second connection:
 * - Listings that cost what they return: the adapter lists with SCAN over the whole keyspace
 *   (on a Redis shared with a million other keys, a million keys read for one listing). Each
 *   namespace keeps an index beside its keys, written in the same script as the value
 *   (redis-scripts.ts): a sorted set of its keys (a listing is a ZRANGEBYLEX, O(log N + what it
 *   returns), whatever else the database holds) and a sorted set of the keys written with a TTL
 *   by expiry time, which the sweeper uses to drop index entries of keys Redis expired (a
 *   listing drops any it meets too). Both sit at `~onair:…:{namespace}`, a name no store key can
 *   take (keys starting with "~" are refused). The index is built once with SCAN when a
 *   namespace is first opened (marked done at `~onair:indexed:…`), so a store written before
 *   the index existed is adopted whole; instances of a version before the index must not write
 *   to it afterwards (upgrade them together).
 * - Grouped writes: the adapter's `setMany` is a MULTI of SETs, which cannot update the index in
 *   the same step; a group here is one script: values, TTLs and index together, or none.
 * - Claims (`SET NX PX`) and compare-and-set (leases), with their index entries: one script
 *   each.
 * Redis must not evict keys (`maxmemory-policy noeviction`, as for any store of record).
 */

const LIST_CHUNK = 1_000;
const DELETE_CHUNK = 500;
const SCAN_COUNT = 1_000;
const INDEX_VERSION = "1";

/** Glob characters in a prefix must match literally. */
function globEscape(s: string): string {
  return s.replace(/[*?[\]\\]/g, "\\$&");
}

/** Where a namespace's index lives; `keyPrefix` is `ns:` or "". */
export function redisIndexKeys(keyPrefix: string): { index: string; expiry: string; done: string } {
  const ns = keyPrefix.endsWith(":") ? keyPrefix.slice(0, -1) : keyPrefix;
  return { index: `~onair:index:${ns}`, expiry: `~onair:ttl:${ns}`, done: `~onair:indexed:${ns}` };
}

type Client = ReturnType<typeof createClient>;
type Script = keyof typeof SCRIPT_TEXT;
const SCRIPT_TEXT = {
  write: scripts.WRITE,
  delete: scripts.DELETE,
  list: scripts.LIST,
  deletePrefix: scripts.DELETE_PREFIX,
  claim: scripts.CLAIM,
  replace: scripts.REPLACE,
  sweep: scripts.SWEEP,
  adopt: scripts.ADOPT,
} as const;

export async function openRedis(url: string, opts: BackendOptions): Promise<Backend> {
  let everConnected = false;
  const client: Client = createClient({
    url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: opts.connectTimeoutMs,
      keepAlive: true,
      // Give up on the first connection (so openStore reports it); after that, keep trying.
      reconnectStrategy: (retries: number, cause: Error) =>
        everConnected ? Math.min(100 * 2 ** Math.min(retries, 5), 3_000) : cause,
    },
  });
  let lastLogged = 0;
  const warn = (err: unknown) => {
    // Reconnect attempts repeat the same error; once per 10 s is enough for an operator.
    const now = Date.now();
    if (now - lastLogged > 10_000) {
      lastLogged = now;
      opts.logger?.warn({ store: redisLabel(url), reason: causeText(err) }, "redis store error");
    }
  };
  client.on("error", warn);
  await client.connect();
  everConnected = true;
  // From here on `client` is the adapter's client (`adapter.client`): the one connection.
  const adapter = new KeyvRedis(client, { throwOnErrors: true, throwOnConnectError: true });
  // It forwards the client's errors (logged above) as its own events, which would throw with no
  // listener.
  adapter.on("error", () => {});

  const { index, expiry, done } = redisIndexKeys(opts.keyPrefix);
  const shas = new Map<Script, string>();
  async function load(name: Script): Promise<string> {
    const sha = String(await client.scriptLoad(SCRIPT_TEXT[name]));
    shas.set(name, sha);
    return sha;
  }
  /** EVALSHA, loading the script again after a server restart or SCRIPT FLUSH. */
  async function run(name: Script, keys: string[], args: string[]): Promise<unknown> {
    const sha = shas.get(name) ?? (await load(name));
    try {
      return await client.evalSha(sha, { keys, arguments: args });
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith("NOSCRIPT")) throw err;
      return client.evalSha(await load(name), { keys, arguments: args });
    }
  }

  try {
    for (const name of Object.keys(SCRIPT_TEXT) as Script[]) await load(name);
    if ((await client.get(done)) !== INDEX_VERSION) await buildIndex();
  } catch (err) {
    client.destroy();
    throw err;
  }

  /** Indexes keys written before the index existed (or by an earlier version). Once. */
  async function buildIndex(): Promise<void> {
    const p = opts.keyPrefix;
    // With no namespace, only keys shaped like the store's own (`segment:…`).
    const ours = p === "" ? /^[a-z][a-z0-9_-]*:/ : undefined;
    let cursor = "0";
    do {
      const r = await client.scan(cursor, { MATCH: `${globEscape(p)}*`, COUNT: SCAN_COUNT });
      cursor = String(r.cursor);
      const keys = r.keys.map(String).filter((k) => !k.startsWith("~") && (!ours || ours.test(k)));
      if (keys.length > 0) await run("adopt", [index, expiry, ...keys], []);
    } while (cursor !== "0");
    await client.set(done, INDEX_VERSION);
  }

  const del = async (keys: readonly string[]) => {
    let n = 0;
    for (let i = 0; i < keys.length; i += DELETE_CHUNK) {
      n += Number(await run("delete", [index, expiry, ...keys.slice(i, i + DELETE_CHUNK)], []));
    }
    return n;
  };

  return {
    kind: "redis",
    label: redisLabel(url),
    maxBatch: 500,
    maxInFlight: 1,
    adapter,
    async get(key) {
      const v = await adapter.get(key);
      return v === undefined || v === null ? undefined : String(v);
    },
    async write(entries) {
      const keys = [index, expiry];
      const args = [String(Date.now())];
      for (const e of entries) {
        keys.push(e.key);
        args.push(e.raw, e.ttlMs === undefined ? "" : String(e.ttlMs));
      }
      await run("write", keys, args);
    },
    async delete(key) {
      return (await del([key])) > 0;
    },
    async scan(prefix, o) {
      const out: Array<[string, string]> = [];
      const limit = o.limit ?? Number.POSITIVE_INFINITY;
      // The script lists after its cursor: `after` is where a listing that skips ahead starts.
      let cursor = afterIn(prefix, o) ?? "";
      do {
        const want = Math.min(LIST_CHUNK, limit - out.length);
        const [flat, next] = (await run(
          "list",
          [index, expiry],
          [prefix, cursor, o.reverse ? "1" : "0", String(want)],
        )) as [string[], string];
        for (let i = 0; i + 1 < flat.length; i += 2)
          out.push([String(flat[i]), String(flat[i + 1])]);
        cursor = String(next);
      } while (cursor !== "" && out.length < limit);
      return out;
    },
    deleteKeys: (keys) => (keys.length === 0 ? Promise.resolve(0) : del(keys)),
    async deletePrefix(prefix) {
      let n = 0;
      for (;;) {
        const [gone, read] = (await run(
          "deletePrefix",
          [index, expiry],
          [prefix, String(DELETE_CHUNK)],
        )) as [number, number];
        n += Number(gone);
        if (Number(read) < DELETE_CHUNK) break;
      }
      // The whole namespace went: its index went with it (Redis drops empty sets); so does the
      // mark, so nothing of the namespace is left behind.
      if (opts.keyPrefix !== "" && prefix === opts.keyPrefix) await client.unlink(done);
      return n;
    },
    async claim(key, raw, ttlMs, now) {
      return (
        Number(await run("claim", [index, expiry, key], [raw, String(ttlMs), String(now)])) === 1
      );
    },
    async replace(key, expected, raw, ttlMs, now) {
      const ttl = ttlMs === undefined ? "" : String(ttlMs);
      const args = [expected, raw, ttl, String(now)];
      return Number(await run("replace", [index, expiry, key], args)) === 1;
    },
    async sweep(_prefix, now) {
      let n = 0;
      for (;;) {
        const [gone, read] = (await run(
          "sweep",
          [index, expiry],
          [String(now), String(DELETE_CHUNK)],
        )) as [number, number];
        n += Number(gone);
        // Entries due but not yet expired by Redis stay for the next sweep.
        if (Number(read) < DELETE_CHUNK || Number(gone) === 0) return n;
      }
    },
    async ping() {
      await client.ping();
    },
    async close() {
      // close() waits for the replies of commands in flight; with the server gone (or frozen)
      // there is nothing to wait for.
      if (client.isReady) {
        await Promise.race([
          client.close(),
          new Promise<void>((r) => setTimeout(r, opts.opTimeoutMs).unref()),
        ]);
      }
      if (client.isOpen) client.destroy();
    },
  };
}
