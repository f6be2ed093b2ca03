import { type ChildProcess, execFile, spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { type SlackEmulator, startSlackEmulator } from "@onair/slack-emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SandboxServer, startSandboxServer } from "../../src/sandbox/index.ts";
import { botScopes } from "../../src/slack/scopes.ts";
import { CHANNELS, USERS } from "../helpers/app-harness.ts";
import { childAppEnv } from "../helpers/live-fixtures.ts";

/**
 * The production start as an operator (or the Dockerfile) does it: the build's JavaScript, the
 * package manifest and lock in an empty directory, production dependencies only, then
 * `node dist/main.js` with a real environment (the emulator standing in for Slack, the sandbox
 * for the upstream services), answering /healthz and a signed slash command.
 *
 * Two things differ from a deploy, both for time and for the network this runs without:
 * the build skips its type check (`--noCheck`; `npm run typecheck` is its own CI step), and
 * sqlite3's native addon is copied from this checkout's install instead of its install script
 * fetching a prebuilt one (`npm ci --ignore-scripts`).
 */

const ROOT = resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";

let dir: string;
let emulator: SlackEmulator;
let sandbox: SandboxServer;
let child: ChildProcess | undefined;
/** Process groups started here: whatever is left of them goes at the end. */
const groups: number[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "onair-prod-"));
  [emulator, sandbox] = await Promise.all([
    startSlackEmulator({
      signingSecret: "prod-start-signing-secret",
      seed: { botScopes: botScopes() },
    }),
    startSandboxServer(),
    run(
      process.execPath,
      [
        join(ROOT, "node_modules/typescript/bin/tsc"),
        "-p",
        join(ROOT, "tsconfig.build.json"),
        "--noCheck",
        "--outDir",
        join(dir, "dist"),
      ],
      { cwd: ROOT },
    ),
  ]);
  // What the Dockerfile copies into the image beside dist/.
  for (const f of ["package.json", "package-lock.json", "scripts/run.mjs"]) {
    cpSync(join(ROOT, f), join(dir, f));
  }
  await run(
    NPM,
    ["ci", "--omit=dev", "--prefer-offline", "--ignore-scripts", "--no-audit", "--no-fund"],
    { cwd: dir, env: { ...process.env, npm_config_loglevel: "error" } },
  );
  cpSync(join(ROOT, "node_modules/sqlite3/build"), join(dir, "node_modules/sqlite3/build"), {
    recursive: true,
  });
}, 120_000);

afterAll(async () => {
  if (child && child.exitCode === null) child.kill("SIGKILL");
  for (const group of groups) {
    try {
      process.kill(-group, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  await emulator?.close();
  await sandbox?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("production start (npm run build, node dist/main.js)", () => {
  it("installs production dependencies only: no TypeScript loader, no emulator, no test tools", () => {
    expect(existsSync(join(dir, "dist/main.js"))).toBe(true);
    expect(existsSync(join(dir, "dist/live/worker-main.js"))).toBe(true);
    for (const dev of ["tsx", "typescript", "vitest", "@onair/slack-emulator", "@biomejs/biome"]) {
      expect({ dev, installed: existsSync(join(dir, "node_modules", dev)) }).toEqual({
        dev,
        installed: false,
      });
    }
    for (const prod of ["@slack/bolt", "pino", "sqlite3", "zod"]) {
      expect(existsSync(join(dir, "node_modules", prod))).toBe(true);
    }
  });

  it("without Slack credentials refuses in one line (the playground is for source checkouts)", async () => {
    const r = await run(process.execPath, ["dist/main.js"], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", PORT: "0" },
    }).then(
      () => ({ code: 0, stderr: "" }),
      (e: { code: number; stderr: string }) => e,
    );
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(/^onair: no Slack credentials: set SLACK_BOT_TOKEN/);
  });

  it("serves /healthz and answers a signed slash command; SIGTERM exits 0", async () => {
    const env = childAppEnv({
      port: 0,
      signingSecret: "prod-start-signing-secret",
      emulator,
      sandbox,
      storeUrl: "sqlite://data/onair.sqlite",
      key: Buffer.alloc(32, 7),
      logLevel: "warn",
    });
    const proc = spawn(process.execPath, ["--enable-source-maps", "dist/main.js"], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", NODE_ENV: "production", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child = proc;
    let out = "";
    proc.stdout?.on("data", (d) => {
      out += String(d);
    });
    proc.stderr?.on("data", (d) => {
      out += String(d);
    });
    const exited = new Promise<number | null>((done) => proc.once("exit", (code) => done(code)));
    const port = await new Promise<string>((done, fail) => {
      const timer = setInterval(() => {
        const m = /serving Slack on port (\d+)/.exec(out);
        if (m?.[1]) {
          clearInterval(timer);
          done(m[1]);
        } else if (proc.exitCode !== null) {
          clearInterval(timer);
          fail(new Error(`dist/main.js exited with ${proc.exitCode}: ${out}`));
        }
      }, 50);
    });
    const origin = `http://127.0.0.1:${port}`;

    const health = await fetch(`${origin}/healthz`);
    expect(health.status).toBe(200);

    emulator.setAppUrl(origin);
    const since = emulator.calls.length;
    const res = await emulator.driver.slashCommand({
      user: USERS.member,
      channel: CHANNELS.general,
      text: "help",
    });
    expect(res.status).toBe(200);
    const answer = await emulator.waitForCall((c) => c.method === "response_url", {
      since,
      timeoutMs: 10_000,
    });
    expect(String(answer.args.text)).toContain("/onair schedule");
    // The store is a file under the working directory's data/, the volume of the container.
    expect(existsSync(join(dir, "data/onair.sqlite"))).toBe(true);

    proc.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(out).not.toMatch(/"level":"(error|fatal)"/);

    // The key rotation command runs from the build too, on the store the app just used: as the
    // README's Deploy section gives it (npm run rekey) and as in a container (node dist/rekey.js).
    for (const [cmd, args] of [
      [NPM, ["run", "--silent", "rekey"]],
      [process.execPath, ["dist/rekey.js"]],
    ] as const) {
      const rekey = await run(cmd, [...args], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? "", ...env },
      });
      expect(rekey.stdout).toMatch(/^onair rekey: 0 values sealed again with ONAIR_ENCRYPTION_KEY/);
    }
  }, 60_000);

  it("npm start and npm run start:prod serve from the build; SIGTERM stops them", async () => {
    const env = childAppEnv({
      port: 0,
      signingSecret: "prod-start-signing-secret",
      emulator,
      sandbox,
      storeUrl: "memory://",
      key: Buffer.alloc(32, 7),
      logLevel: "warn",
    });
    for (const script of ["start", "start:prod"]) {
      // Its own process group: npm, its shell and the app, as a terminal or a service manager
      // holds them and signals them together.
      const proc = spawn(NPM, ["run", "--silent", script], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? "", NODE_ENV: "production", ...env },
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
      });
      groups.push(proc.pid as number);
      child = proc;
      let out = "";
      proc.stdout?.on("data", (d) => {
        out += String(d);
      });
      proc.stderr?.on("data", (d) => {
        out += String(d);
      });
      // npm ends itself by the signal it was sent (or 0 once its script has ended).
      const exited = new Promise<number | string | null>((done) =>
        proc.once("exit", (code, signal) => done(code ?? signal)),
      );
      const port = await new Promise<string>((done, fail) => {
        const timer = setInterval(() => {
          const m = /serving Slack on port (\d+)/.exec(out);
          if (m?.[1]) {
            clearInterval(timer);
            done(m[1]);
          } else if (proc.exitCode !== null) {
            clearInterval(timer);
            fail(new Error(`npm run ${script} exited with ${proc.exitCode}: ${out}`));
          }
        }, 50);
      });
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      process.kill(-(proc.pid as number), "SIGTERM");
      expect([0, "SIGTERM"]).toContain(await exited);
      // The app itself heard it and closed: its line says so, and its port is free.
      await expect
        .poll(
          () =>
            fetch(`http://127.0.0.1:${port}/healthz`).then(
              () => "open",
              () => "closed",
            ),
          {
            timeout: 10_000,
          },
        )
        .toBe("closed");
      // Written before the close began, but read from the pipe in its own time: wait for it.
      await expect.poll(() => out, { timeout: 10_000 }).toMatch(/"msg":"SIGTERM, shutting down"/);
      expect(out).not.toMatch(/tsx: not found|"level":"(error|fatal)"/);
    }
  }, 60_000);
});
