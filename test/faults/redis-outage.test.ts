import { type ChildProcess, spawn } from "node:child_process";
import { connect } from "node:net";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../scripts/ports.ts";
import { CHANNELS, type Harness, startHarness, USERS } from "../helpers/app-harness.ts";
import { NO_REDIS_SERVER } from "./fault-helpers.ts";

/**
 * A Redis of our own (not the shared one), stopped and started again under a running app:
 * requests fail clearly while it is down, and the app recovers without a restart.
 */

async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    {
      stdio: "ignore",
    },
  );
  for (let i = 0; i < 100; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const s = connect(port, "127.0.0.1", () => {
        s.end();
        resolve(true);
      });
      s.on("error", () => resolve(false));
    });
    if (up) return child;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("redis-server did not start");
}

async function stopRedis(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGKILL");
  await exited;
}

async function readyz(h: Harness): Promise<number> {
  const res = await request(`${h.app.origin}/readyz`);
  await res.body.dump();
  return res.statusCode;
}

let h: Harness;
let redis: ChildProcess;
let port: number;

beforeAll(async () => {
  if (NO_REDIS_SERVER) return;
  port = await freePort();
  redis = await startRedis(port);
  h = await startHarness({ storeUrl: `redis://127.0.0.1:${port}` });
});
afterAll(async () => {
  await h?.close();
  if (redis && redis.exitCode === null && redis.signalCode === null) await stopRedis(redis);
});

describe.skipIf(NO_REDIS_SERVER)("Redis stopped and restarted under a running app", () => {
  it("answers plainly while the store is down and recovers without a restart", async () => {
    expect(await readyz(h)).toBe(200);

    await stopRedis(redis);
    expect(await readyz(h)).toBe(503);

    // A command that needs the store still acks, and the user gets a plain sentence.
    const since = h.emulator.calls.length;
    const res = await h.driver.slashCommand({
      user: USERS.omar,
      channel: CHANNELS.general,
      text: "whoami",
    });
    expect(res.status).toBe(200);
    const reply = await h.emulator.waitForCall((c) => c.method === "response_url", {
      since,
      timeoutMs: 10_000,
    });
    expect(String(reply.args.text)).toMatch(/try again/i);
    expect(String(reply.args.text)).not.toMatch(/redis|ECONNREFUSED|stack/i);

    redis = await startRedis(port);
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      status = await readyz(h);
      if (status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(200);

    const since2 = h.emulator.calls.length;
    await h.driver.slashCommand({ user: USERS.omar, channel: CHANNELS.general, text: "help" });
    const ok = await h.emulator.waitForCall((c) => c.method === "response_url", {
      since: since2,
      timeoutMs: 10_000,
    });
    expect(String(ok.args.text)).toContain("/onair schedule");
    // The process is still up and serving.
    expect(await readyz(h)).toBe(200);
  });
});
