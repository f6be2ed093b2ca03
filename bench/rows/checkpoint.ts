import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCipher, openStore, type Store } from "../../src/store/index.ts";
import type { Row } from "../harness/table.ts";

/**
 * Who pays for SQLite's checkpoints. The route's store commits each group of webhooks and
 * acknowledges them after; the engine's connection to the same file reads and deletes them. A
 * checkpoint (copy the log into the database, sync both files) runs inside the commit that
 * finds the log past its bound. With both connections checkpointing ("here", as before), most
 * of them land in the route's commits; with the route's store opened `sqliteCheckpoints:
 * "elsewhere"` they land in the engine's deletes. Measured: the route's commit latency, groups of
 * 10 outbox-sized rows one after another, while the engine's connection deletes what was
 * written every 50 ms — the same file layout and client as the app, without HTTP. A checkpoint
 * every ~160 groups puts 0.6 % of the route's commits at ~10 ms: the p99. What is left past it
 * is the route's commit waiting for the engine's delete to let go of the write lock (SQLite's
 * busy handler sleeps 1, 2, 5 ms…), and the disk.
 */

const GROUPS = 4_000;
const ROWS = 10;

const fmt = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a");

interface Latencies {
  p99: number;
  p999: number;
  max: number;
  over5: number;
}

async function commits(routeMode: "here" | "elsewhere"): Promise<Latencies> {
  const dir = mkdtempSync(join(tmpdir(), "onair-bench-ckpt-"));
  const url = `sqlite://${join(dir, "bench.sqlite")}`;
  const cipher = createCipher(randomBytes(32));
  const route: Store = await openStore(url, { cipher, sqliteCheckpoints: routeMode });
  const engine: Store = await openStore(url, { cipher });
  const value = {
    team: "T0BENCH",
    subscriptionId: "s".repeat(24),
    eventId: "e".repeat(24),
    receivedAt: Date.now(),
    message: {
      type: "ATTENDEE_INFO",
      eventId: "e".repeat(24),
      instanceId: "i".repeat(24),
      info: { endpointGuid: "g".repeat(36), name: "A Bench Attendee", state: "JOINED" },
    },
  };
  let written: string[] = [];
  let draining = true;
  const drain = (async () => {
    while (draining) {
      await new Promise((r) => setTimeout(r, 50));
      const keys = written;
      written = [];
      if (keys.length > 0) await engine.deleteMany(keys);
    }
  })();
  const lat: number[] = [];
  try {
    let n = 0;
    for (let g = 0; g < GROUPS; g++) {
      const keys = Array.from({ length: ROWS }, () => `outbox:${String(n++).padStart(12, "0")}`);
      const t0 = performance.now();
      await Promise.all(keys.map((k) => route.set(k, value)));
      lat.push(performance.now() - t0);
      written.push(...keys);
    }
  } finally {
    draining = false;
    await drain;
    await route.close();
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
  lat.sort((a, b) => a - b);
  const at = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] ?? Number.NaN;
  return {
    p99: at(0.99),
    p999: at(0.999),
    max: lat.at(-1) ?? Number.NaN,
    over5: lat.filter((l) => l > 5).length,
  };
}

export async function checkpointRows(rows: Row[]): Promise<void> {
  const here = await commits("here");
  const elsewhere = await commits("elsewhere");
  const text = (l: Latencies) =>
    `p99 ${fmt(l.p99)} (${l.over5} over 5 ms; p99.9 ${fmt(l.p999)}, max ${fmt(l.max)})`;
  rows.push({
    measure: `SQLite outbox commit (ms), ${GROUPS} groups of ${ROWS}: checkpoints left to the engine's connection`,
    figure: text(elsewhere),
    baseline: `${text(here)} checkpointing in place`,
    ratio: fmt(elsewhere.p99 / here.p99),
    bar: "-",
    met: undefined,
  });
}
