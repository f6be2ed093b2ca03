import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { startSlackEmulator } from "@onair/slack-emulator";
import { describe, expect, it } from "vitest";
import { botScopes } from "../../src/slack/scopes.ts";
import { runMain, tempDir } from "../helpers/main-process.ts";

/**
 * `npm start`'s entry, as a user runs it: a child process in an empty directory with an empty
 * environment (only PATH and the port), no Slack credentials → the playground.
 */

// Each test starts `npm start`'s entry cold (tsx compiles the app): a loaded machine needs time.
describe("npm start (src/main.ts)", { timeout: 60_000 }, () => {
  it("with an empty environment starts the playground, prints its URL and serves it; SIGTERM exits 0", async () => {
    const cwd = tempDir();
    const p = runMain({ PORT: "0", LOG_LEVEL: "warn" }, cwd);
    const m = await p.waitFor(/open (http:\/\/localhost:(\d+)\/playground)/);
    const url = m[1] as string;
    const origin = new URL(url).origin;

    const health = await fetch(`${origin}/healthz`);
    expect(health.status).toBe(200);
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(await page.text()).toContain("/playground/static/app.js");
    const state = await fetch(`${origin}/playground/api/state?user=U0ADA0ADMIN`);
    expect(state.status).toBe(200);
    expect(((await state.json()) as { me: string }).me).toBe("U0ADA0ADMIN");
    const root = await fetch(`${origin}/`, { redirect: "manual" });
    expect(root.headers.get("location")).toBe("/playground");

    // The playground's data lives in ./data: the store and the generated key.
    expect(existsSync(join(cwd, "data/onair.sqlite"))).toBe(true);

    p.child.kill("SIGTERM");
    expect(await p.exited).toBe(0);
    // The workspace was written on the way out.
    expect(existsSync(join(cwd, "data/playground-workspace.json"))).toBe(true);
  });

  it("with Slack credentials serves Slack, and no playground", async () => {
    const emulator = await startSlackEmulator({
      signingSecret: "a-signing-secret-for-tests",
      seed: { botScopes: botScopes() },
    });
    try {
      const cwd = tempDir();
      const p = runMain(
        {
          PORT: "0",
          LOG_LEVEL: "warn",
          SLACK_BOT_TOKEN: emulator.botToken,
          ONAIR_SANDBOX: "1",
          SLACK_SIGNING_SECRET: "a-signing-secret-for-tests",
          SLACK_API_URL: emulator.apiUrl,
          ONAIR_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
          STORE_URL: "memory://",
        },
        cwd,
      );
      const m = await p.waitFor(/serving Slack on port (\d+)/);
      const origin = `http://127.0.0.1:${m[1]}`;
      expect((await fetch(`${origin}/healthz`)).status).toBe(200);
      expect((await fetch(`${origin}/playground`)).status).toBe(404);
      // Unsigned requests to the Slack endpoint are refused.
      const unsigned = await fetch(`${origin}/slack/events`, { method: "POST", body: "{}" });
      expect(unsigned.status).toBeGreaterThanOrEqual(400);
      p.child.kill("SIGTERM");
      expect(await p.exited).toBe(0);
      expect(p.out()).not.toContain(emulator.botToken);
    } finally {
      await emulator.close();
    }
  });

  it("a bad variable stops it with exit 1 and one line naming the variable", async () => {
    const cwd = tempDir();
    const p = runMain({ PORT: "0", STORE_URL: "ftp://nowhere" }, cwd);
    expect(await p.exited).toBe(1);
    const lines = p.err().trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/STORE_URL/);
    expect(p.out()).toBe("");
  });

  it("a port already in use stops it with exit 1 and one line naming PORT", async () => {
    const busy = createServer();
    await new Promise<void>((done) => busy.listen(0, "0.0.0.0", done));
    try {
      const port = (busy.address() as AddressInfo).port;
      const p = runMain({ PORT: String(port), LOG_LEVEL: "silent" }, tempDir());
      expect(await p.exited).toBe(1);
      const lines = p.err().trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`PORT ${port} is already in use`));
    } finally {
      busy.close();
    }
  });

  it("a signal while it starts: it finishes starting, then closes cleanly (exit 0)", async () => {
    const cwd = tempDir();
    const p = runMain({ PORT: "0", LOG_LEVEL: "debug" }, cwd);
    // The first log line comes while the app is still starting (Bolt initialised, nothing
    // announced): the default action of SIGINT here would end it by the signal.
    await p.waitFor(/"msg":"initialized"/);
    expect(p.out()).not.toMatch(/open http/);
    p.child.kill("SIGINT");
    expect(await p.exited, `stdout: ${p.out()}\nstderr: ${p.err()}`).toBe(0);
    expect(p.out()).toMatch(
      /open http:\/\/localhost:\d+\/playground[\s\S]*\{"level":"info".*"msg":"SIGINT, shutting down"\}/,
    );
    expect(existsSync(join(cwd, "data/playground-workspace.json"))).toBe(true);
  });

  it("reads .env in the working directory; the environment wins over it", async () => {
    const cwd = tempDir();
    const { writeFileSync } = await import("node:fs");
    writeFileSync(join(cwd, ".env"), "LOG_LEVEL=loud\nPORT=0\n");
    const bad = runMain({}, cwd);
    expect(await bad.exited).toBe(1);
    expect(bad.err().trim()).toMatch(/^onair: .*LOG_LEVEL/);

    const good = runMain({ LOG_LEVEL: "warn" }, cwd);
    await good.waitFor(/open http:\/\/localhost:\d+\/playground/);
    good.child.kill("SIGINT");
    expect(await good.exited, `stdout: ${good.out()}\nstderr: ${good.err()}`).toBe(0);
  });
});
