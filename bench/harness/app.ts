/**
 * The app as the bench runs it in process: Bolt on port 0, the embedded sandbox, a real store,
 * against the Slack emulator. The bench's own, not test/helpers' (which assert as they close):
 * the bench measures, so what it runs changes only when a row asks for it.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { type SlackDriver, type SlackEmulator, startSlackEmulator } from "@onair/slack-emulator";
import { type OnAirApp, startApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { botScopes } from "../../src/slack/scopes.ts";

/** The emulator's seeded workspace: its team, people and channels, by role. */
export const TEAM = "T0ONAIR";
export const USERS = { admin: "U0ADA0ADMIN", omar: "U0OMAR0ORG" } as const;
export const CHANNELS = {
  general: "C0GENERAL",
  events: "C0EVENTS",
  townHall: "C0TOWNHALL",
} as const;
/** The seeded people's addresses at the sandbox (example.com is its one registered domain). */
export const EMAILS: Readonly<Record<string, string>> = {
  U0ADA0ADMIN: "ada@example.com",
  U0OMAR0ORG: "omar@example.com",
};

export interface BenchApp {
  readonly app: OnAirApp;
  readonly emulator: SlackEmulator;
  readonly driver: SlackDriver;
  readonly signingSecret: string;
  close(): Promise<void>;
}

export async function startBenchApp(
  options: { storeUrl?: string; liveEngine?: "thread" | "inline" } = {},
): Promise<BenchApp> {
  const signingSecret = randomBytes(16).toString("hex");
  const emulator = await startSlackEmulator({ signingSecret, seed: { botScopes: botScopes() } });
  const dir = mkdtempSync(join(tmpdir(), "onair-bench-app-"));
  const app = await startApp({
    config: loadConfig({
      PORT: "0",
      SLACK_SIGNING_SECRET: signingSecret,
      SLACK_API_URL: emulator.apiUrl,
      SLACK_BOT_TOKEN: emulator.botToken,
      STORE_URL: options.storeUrl ?? `sqlite://${join(dir, "onair.sqlite")}`,
      ONAIR_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      LOG_LEVEL: "warn",
      ONAIR_SANDBOX: "1",
    }),
    // The table is the bench's output; the app's warnings (a load generator's response_url
    // that answers nothing) are not.
    logDestination: new Writable({ write: (_chunk, _enc, cb) => cb() }),
    retryPolicy: "fast",
    host: "127.0.0.1",
    dataDir: dir,
    ...(options.liveEngine ? { liveEngine: options.liveEngine } : {}),
  });
  emulator.setAppUrl(app.origin);
  return {
    app,
    emulator,
    driver: emulator.driver,
    signingSecret,
    async close() {
      await app.close();
      await emulator.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Waits until the live engine has drained the outbox (nothing left to apply) and returns how
 * long that took in ms. Run after each app load and before the next floor's: a drain still
 * running would slow the floor's run and flatter the app's ratio (the engine's work must count
 * against the app, not against the floor). Gives up after `limitMs` (the figure says so).
 */
export async function caughtUp(h: BenchApp, limitMs = 60_000): Promise<number> {
  const start = performance.now();
  while (performance.now() - start < limitMs) {
    if ((await h.app.store.outbox.list(1)).length === 0) return performance.now() - start;
    await new Promise((r) => setTimeout(r, 10));
  }
  return Number.POSITIVE_INFINITY;
}
