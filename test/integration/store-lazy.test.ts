import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

/**
 * A process loads the client of the store STORE_URL names and no other: the main thread and
 * the live engine's thread each pay for it (pg and @redis/client cost ~16 MB RSS apiece).
 */

const run = promisify(execFile);
const HELPER = join(import.meta.dirname, "../helpers/store-modules.ts");
const dir = mkdtempSync(join(tmpdir(), "onair-store-lazy-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function clientsLoadedFor(url: string): Promise<Record<string, boolean>> {
  const { stdout } = await run(process.execPath, ["--import", "tsx", HELPER, url], {
    cwd: join(import.meta.dirname, "../.."),
  });
  return JSON.parse(stdout) as Record<string, boolean>;
}

describe("opening a store", () => {
  it("loads only the SQLite client for sqlite://", async () => {
    const url = `sqlite://${join(dir, "lazy.sqlite")}`;
    expect(await clientsLoadedFor(url)).toEqual({ sqlite3: true, redis: false, pg: false });
  });

  it("loads none of them for memory://", async () => {
    expect(await clientsLoadedFor("memory://")).toEqual({
      sqlite3: false,
      redis: false,
      pg: false,
    });
  });
});
