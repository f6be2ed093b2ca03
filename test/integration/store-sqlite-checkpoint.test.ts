import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createCipher, openStore, type Store } from "../../src/store/index.ts";

/**
 * Who checkpoints SQLite's write-ahead log. A checkpoint copies the log into the database and
 * syncs both files, inside the commit that finds the log past its bound: the route's store
 * (`sqliteCheckpoints: "elsewhere"`) must leave that to the engine's connection, so that no
 * acknowledgement waits on it. Seen from the files: the database file grows only when a
 * checkpoint has copied pages into it; the log grows past SQLite's 1,000 pages only when no
 * commit has checkpointed it.
 */

const PAGE = 4096;
const ROWS = 1_500;
const dir = mkdtempSync(join(tmpdir(), "onair-checkpoint-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cipher = createCipher(randomBytes(32));

/** ROWS values of ~3 KB: one table page each. */
async function fill(store: Store, tag: string): Promise<void> {
  const value = "x".repeat(3_000);
  for (let i = 0; i < ROWS; i += 50) {
    await Promise.all(
      Array.from({ length: 50 }, (_, j) => store.set(`fill:${tag}:${i + j}`, { value })),
    );
  }
}

const size = (path: string) => statSync(path).size;

describe("SQLite checkpoints", () => {
  it("a store that leaves them elsewhere lets its log grow; one that keeps them checkpoints it", async () => {
    const path = join(dir, "elsewhere.sqlite");
    const url = `sqlite://${path}`;
    const route = await openStore(url, { cipher, sqliteCheckpoints: "elsewhere" });
    const engine = await openStore(url, { cipher });
    try {
      const before = size(path);
      await fill(route, "route");
      // Nothing copied into the database: every page is still in the log, past 1,000 pages.
      expect(size(path)).toBe(before);
      expect(size(`${path}-wal`)).toBeGreaterThan(ROWS * PAGE);
      // The engine's next commit finds the log past its bound and copies it in.
      await engine.set("engine:one", { n: 1 });
      expect(size(path)).toBeGreaterThan(ROWS * PAGE);
      expect(await route.get<{ value: string }>("fill:route:1499")).toEqual({
        value: "x".repeat(3_000),
      });
    } finally {
      await route.close();
      await engine.close();
    }
  });

  it("by default a store checkpoints its own log as it grows", async () => {
    const path = join(dir, "here.sqlite");
    const store = await openStore(`sqlite://${path}`, { cipher });
    try {
      const before = size(path);
      await fill(store, "here");
      expect(size(path)).toBeGreaterThan(before + 500 * PAGE);
      // Reused from its start after each checkpoint: about SQLite's 1,000 pages, never ROWS.
      expect(size(`${path}-wal`)).toBeLessThan(ROWS * PAGE);
    } finally {
      await store.close();
    }
  });
});
