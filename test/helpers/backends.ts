import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, it } from "vitest";
import { type OpenStoreOptions, openStore, type Store } from "../../src/store/index.ts";

/**
 * Suites run once per store backend. Redis and Postgres come from TEST_REDIS_URL and
 * TEST_POSTGRES_URL; unset, their suites are skipped, unless ONAIR_REQUIRE_SERVICES=1 (CI), where
 * a missing service is a failing test.
 */

const REQUIRE = process.env.ONAIR_REQUIRE_SERVICES === "1";

export interface NamedBackend {
  name: string;
  /** undefined: the service is not configured. */
  url: (() => string) | undefined;
}

/** `body` inside `describe(`${title} on ${name}`)` for each backend, as above. */
export function describeBackends<B extends NamedBackend>(
  title: string,
  backends: readonly B[],
  body: (backend: B) => void,
): void {
  for (const backend of backends) {
    const missing = backend.url === undefined;
    if (missing && REQUIRE) {
      describe(`${title} on ${backend.name}`, () => {
        it("has its service configured (ONAIR_REQUIRE_SERVICES=1)", () => {
          throw new Error(
            `TEST_${backend.name.toUpperCase()}_URL is not set but ONAIR_REQUIRE_SERVICES=1`,
          );
        });
      });
      continue;
    }
    describe.skipIf(missing)(`${title} on ${backend.name}`, () => body(backend));
  }
}

/** A directory of the calling file's own, made before its tests and removed after them. */
export function suiteDir(name: string): () => string {
  let dir = "";
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), `onair-${name}-`));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  return () => {
    if (!dir) throw new Error("suiteDir is read before its tests run");
    return dir;
  };
}

/**
 * For the calling suite: `fresh()` opens a store under a namespace of its own (and, for file and
 * memory backends, a database of its own); `another(url, ns)` opens the same again. Each is
 * emptied and closed after its test (as is one given to `track`), leaving the shared Redis and Postgres as they were (closed
 * stores cannot be emptied, and need not be).
 */
export function storesOfEachTest(
  backend: NamedBackend,
  options: Omit<OpenStoreOptions, "namespace">,
): {
  fresh(): Promise<{ store: Store; url: string; ns: string }>;
  another(url: string, ns: string): Promise<Store>;
  /** A store the test opened itself, closed after it like the others. */
  track(store: Store): Store;
} {
  const opened: Store[] = [];
  afterEach(async () => {
    for (const s of opened) await s.deletePrefix("").catch(() => {});
    await Promise.all(opened.splice(0).map((s) => s.close().catch(() => {})));
  });
  const another = async (url: string, ns: string) => {
    const s = await openStore(url, { sweepIntervalMs: 0, ...options, namespace: ns });
    opened.push(s);
    return s;
  };
  return {
    another,
    track(store) {
      opened.push(store);
      return store;
    },
    async fresh() {
      const url = backend.url?.();
      if (url === undefined) throw new Error(`${backend.name} is not configured`);
      const ns = `t${randomUUID().replaceAll("-", "").slice(0, 12)}`;
      return { store: await another(url, ns), url, ns };
    },
  };
}
