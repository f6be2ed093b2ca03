import { type ChildProcess, execFile, spawn } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "../../scripts/ports.ts";

/**
 * Store servers of a test's own (never the shared ones): a redis-server and a throwaway
 * PostgreSQL cluster on free ports in temporary folders, which a test may freeze (SIGSTOP),
 * thaw (SIGCONT) or kill without touching anyone else's.
 */

const exec = promisify(execFile);

export interface OwnServer {
  readonly url: string;
  readonly port: number;
  /** SIGSTOP every process of the server: it keeps its sockets and answers nothing. */
  freeze(): void;
  thaw(): void;
  stop(): Promise<void>;
}

export { freePort };

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
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing listens on ${port} after ${timeoutMs} ms`);
}

/** Whether this machine can run a private redis-server. */
export const HAVE_REDIS_SERVER = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"].some(
  (p) => existsSync(p),
);

/** `extraArgs`: more redis-server options (the bench enables DEBUG POPULATE locally). */
export async function startRedisServer(extraArgs: readonly string[] = []): Promise<OwnServer> {
  const dir = mkdtempSync(join(tmpdir(), "onair-redis-"));
  const port = await freePort();
  const child: ChildProcess = spawn(
    "redis-server",
    [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--dir",
      dir,
      "--save",
      "",
      "--appendonly",
      "no",
      ...extraArgs,
    ],
    { stdio: "ignore" },
  );
  await listening(port, 10_000);
  const pid = child.pid ?? 0;
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    freeze: () => process.kill(pid, "SIGSTOP"),
    thaw: () => process.kill(pid, "SIGCONT"),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const gone = new Promise((r) => child.once("exit", r));
        process.kill(pid, "SIGCONT");
        child.kill("SIGKILL");
        await gone;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
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

/** The postmaster and every backend it forked, from /proc. */
function clusterPids(postmaster: number): number[] {
  const pids = [postmaster];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // pid (comm) state ppid …: comm may hold spaces, so read after the last ")".
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === postmaster) pids.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

/**
 * A PostgreSQL cluster of the test's own (initdb + pg_ctl as the `postgres` OS user: the server
 * refuses to run as root), trust authentication on 127.0.0.1, fsync off (it is thrown away)
 * unless `durable` (the bench: commits cost what they cost in production).
 */
export async function startPostgresCluster(opts: { durable?: boolean } = {}): Promise<OwnServer> {
  const bin = pgBin();
  if (!bin) throw new Error("no PostgreSQL binaries under /usr/lib/postgresql");
  const dir = mkdtempSync(join(tmpdir(), "onair-pg-"));
  chownSync(dir, Number((await exec("id", ["-u", "postgres"])).stdout.trim()), 0);
  const data = join(dir, "data");
  const as = (cmd: string, args: string[]) =>
    exec("runuser", ["-u", "postgres", "--", join(bin, cmd), ...args], { timeout: 60_000 });
  await as("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]);
  const port = await freePort();
  await as("pg_ctl", [
    "-D",
    data,
    "-l",
    join(dir, "log"),
    "-w",
    "-o",
    `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir}${opts.durable ? "" : " -c fsync=off"} -c max_connections=50`,
    "start",
  ]);
  const postmaster = Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]);
  let frozen: number[] = [];
  const thaw = () => {
    for (const pid of new Set([...frozen, ...clusterPids(postmaster)])) {
      try {
        process.kill(pid, "SIGCONT");
      } catch {
        // Exited meanwhile.
      }
    }
    frozen = [];
  };
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    port,
    freeze() {
      frozen = clusterPids(postmaster);
      for (const pid of frozen) process.kill(pid, "SIGSTOP");
    },
    thaw,
    async stop() {
      thaw();
      await as("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The shared test Redis (TEST_REDIS_URL) at database `db`, emptied: for files whose app runs with
 * no key namespace (child processes), so each such file takes a database of its own. Throws when
 * TEST_REDIS_URL is not set (callers skip first unless ONAIR_REQUIRE_SERVICES=1).
 */
export async function emptyRedisDatabase(db: number): Promise<string> {
  const base = process.env.TEST_REDIS_URL;
  if (!base) throw new Error("TEST_REDIS_URL is required (ONAIR_REQUIRE_SERVICES=1)");
  const url = new URL(base);
  url.pathname = `/${db}`;
  const { createClient } = await import("@redis/client");
  const redis = createClient({ url: url.toString() });
  await redis.connect();
  await redis.flushDb();
  await redis.close();
  return url.toString();
}
