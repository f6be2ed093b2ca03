import { afterIn, type Backend, expiresOf } from "./types.ts";

/**
 * In-process store for tests and throwaway runs. `memory://` is private to one store;
 * `memory://NAME` is shared by every store opened with that name in this process (and kept
 * after close, as a server would keep its data), so two stores can contend like two instances.
 * Listings walk every key: it holds what one test writes, never a production keyspace.
 */

const shared = new Map<string, Map<string, string>>();

export function openMemory(name: string): Backend {
  let map: Map<string, string>;
  if (name === "") {
    map = new Map();
  } else {
    map = shared.get(name) ?? new Map();
    shared.set(name, map);
  }
  let closed = false;
  const live = () => {
    if (closed) throw new Error("store is closed");
  };
  const matching = (prefix: string) => [...map.keys()].filter((k) => k.startsWith(prefix));

  return {
    kind: "memory",
    label: name === "" ? "memory" : `memory ${name}`,
    maxBatch: 1_000,
    maxInFlight: 1,
    adapter: undefined,
    async get(key) {
      live();
      return map.get(key);
    },
    async write(entries) {
      live();
      for (const e of entries) map.set(e.key, e.raw);
    },
    async delete(key) {
      live();
      return map.delete(key);
    },
    async scan(prefix, o) {
      live();
      const after = afterIn(prefix, o);
      const keys = matching(prefix)
        .filter((k) => after === undefined || k > after)
        .sort();
      if (o.reverse) keys.reverse();
      const wanted = o.limit === undefined ? keys : keys.slice(0, o.limit);
      return wanted.map((k) => [k, map.get(k)!] as [string, string]);
    },
    async deleteKeys(keys) {
      live();
      let n = 0;
      for (const k of keys) if (map.delete(k)) n++;
      return n;
    },
    async deletePrefix(prefix) {
      live();
      const keys = matching(prefix);
      for (const k of keys) map.delete(k);
      return keys.length;
    },
    async claim(key, raw, _ttl, now) {
      live();
      // No await between the check and the write: atomic on one event loop.
      const existing = map.get(key);
      if (existing !== undefined) {
        const exp = expiresOf(existing);
        if (exp === undefined || exp >= now) return false;
      }
      map.set(key, raw);
      return true;
    },
    async replace(key, expected, raw) {
      live();
      if (map.get(key) !== expected) return false;
      map.set(key, raw);
      return true;
    },
    async sweep(prefix, now) {
      live();
      let n = 0;
      for (const k of matching(prefix)) {
        const exp = expiresOf(map.get(k)!);
        if (exp !== undefined && exp < now) {
          map.delete(k);
          n++;
        }
      }
      return n;
    },
    async ping() {
      live();
    },
    async close() {
      closed = true;
    },
  };
}
