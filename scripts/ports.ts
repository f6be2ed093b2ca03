import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/**
 * A port for a server started later by a test (a child app, a Redis, a balancer's backend) or by
 * the bench (its own redis-server and PostgreSQL cluster, bench/harness/servers.ts).
 *
 * Not the kernel's pick on port 0: that comes from the ephemeral range, the same range every
 * outgoing connection's local port is drawn from. Between the probe closing and the child
 * listening, a connection to Redis, Postgres or the emulator from any test process could take it
 * (CI saw `EADDRINUSE` so). These ports lie below the ephemeral range, where no outgoing connection
 * lands, and each vitest worker has its own slice of them, so two test files never draw the same
 * one (the bench, outside vitest, draws from the first). Within a process a counter walks the
 * slice; a port something already listens on is skipped.
 */
const LOWEST = 20_000;
const SLICES = 8;

function ephemeralLow(): number {
  try {
    const low = Number(
      readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").split(/\s+/)[0],
    );
    return Number.isInteger(low) && low > LOWEST + SLICES * 100 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

const size = Math.floor((ephemeralLow() - LOWEST) / SLICES);
const slice = (Number(process.env.VITEST_POOL_ID ?? 0) || 0) % SLICES;
const base = LOWEST + slice * size;
// A random start, so a run straight after another does not meet its ports in TIME_WAIT.
let next = Math.floor(Math.random() * size);

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}

export async function freePort(): Promise<number> {
  for (let tried = 0; tried < size; tried++) {
    const port = base + (next++ % size);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port in ${base}–${base + size - 1}`);
}
