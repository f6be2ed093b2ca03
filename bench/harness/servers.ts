/**
 * Store servers of the bench's own, so no other work shares them: a redis-server and a
 * throwaway, durable PostgreSQL cluster, on free ports in temporary folders.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "../../scripts/ports.ts";
import { sleep } from "./measure.ts";

const exec = promisify(execFile);

export interface OwnServer {
  readonly url: string;
  stop(): Promise<void>;
}

async function listening(port: number, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const up = await new Promise<boolean>((resolve) => {
      const s = connect(port, "127.0.0.1", () => {
        s.end();
        resolve(true);
      });
      s.on("error", () => resolve(false));
    });
    if (up) return;
    await sleep(50);
  }
  throw new Error(`nothing listens on ${port} after ${timeoutMs} ms`);
}

/** `extraArgs`: more redis-server options (the keyspace rows enable DEBUG POPULATE locally). */
export async function startRedisServer(extraArgs: readonly string[] = []): Promise<OwnServer> {
  const dir = mkdtempSync(join(tmpdir(), "onair-bench-redis-"));
  const port = await freePort();
  const child: ChildProcess = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", ""].concat([
      "--appendonly",
      "no",
      ...extraArgs,
    ]),
    { stdio: "ignore" },
  );
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((r) => child.once("exit", r));
      child.kill("SIGKILL");
      await gone;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await listening(port, 10_000);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url: `redis://127.0.0.1:${port}`, stop };
}

function pgBin(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  for (const v of versions) {
    const bin = join(root, v, "bin");
    if (existsSync(join(bin, "initdb")) && existsSync(join(bin, "pg_ctl"))) return bin;
  }
  return undefined;
}

/** initdb and pg_ctl are there and this process may run them as `postgres` (it is root). */
export const HAVE_POSTGRES_CLUSTER =
  pgBin() !== undefined && process.getuid?.() === 0 && existsSync("/usr/sbin/runuser");

/**
 * A PostgreSQL cluster of the bench's own (initdb + pg_ctl as the `postgres` OS user: the server
 * refuses to run as root), trust authentication on 127.0.0.1, fsync on: commits cost what they
 * cost in production.
 */
export async function startPostgresCluster(): Promise<OwnServer> {
  const bin = pgBin();
  if (!bin) throw new Error("no PostgreSQL binaries under /usr/lib/postgresql");
  const dir = mkdtempSync(join(tmpdir(), "onair-bench-pg-"));
  chownSync(dir, Number((await exec("id", ["-u", "postgres"])).stdout.trim()), 0);
  const data = join(dir, "data");
  const as = (cmd: string, args: string[]) =>
    exec("runuser", ["-u", "postgres", "--", join(bin, cmd), ...args], { timeout: 60_000 });
  await as("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]);
  const port = await freePort();
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} -c max_connections=50`;
  await as("pg_ctl", ["-D", data, "-l", join(dir, "log"), "-w", "-o", options, "start"]);
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      await as("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
