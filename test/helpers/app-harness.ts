import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { type OnAirApp, startApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import type { SlackDriver } from "../../src/playground/driver.ts";
import { type SlackEmulator, startSlackEmulator } from "../../src/playground/emulator/server.ts";
import type { Sandbox } from "../../src/sandbox/index.ts";

/** The seeded emulator workspace's people and channels, by role. */
export const TEAM = "T0ONAIR";
export const USERS = {
  admin: "U0ADA0ADMIN",
  omar: "U0OMAR0ORG",
  kei: "U0KEI0ORG",
  member: "U0MIA0MEMBER",
} as const;
export const CHANNELS = {
  general: "C0GENERAL",
  events: "C0EVENTS",
  townHall: "C0TOWNHALL",
  audit: "C0AUDIT",
} as const;

export interface Harness {
  readonly app: OnAirApp;
  readonly emulator: SlackEmulator;
  readonly driver: SlackDriver;
  readonly sandbox: Sandbox;
  /** Every log line the app wrote. */
  readonly logs: string[];
  /** The secrets this run used (signing secret, bot token, encryption key): none may leak. */
  readonly secrets: string[];
  /** Starts a second app process-alike on the same store (scale-out tests). */
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** Default: a fresh SQLite file in a temp dir. */
  storeUrl?: string;
  /** OAuth mode (no bot token): install through the emulator's authorize page. */
  oauth?: boolean;
  env?: Record<string, string>;
  /** Key prefix in a shared store (Redis, Postgres), so parallel test files never collide. */
  storeNamespace?: string;
  /** The bot token's scopes (an install that granted fewer); default: every one. */
  botScopes?: readonly string[];
}

/**
 * The real app (Bolt, HTTP on port 0, the embedded sandbox, a real store) against the Slack
 * emulator, with signed requests from the emulator's driver.
 */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const signingSecret = randomBytes(16).toString("hex");
  const encryptionKey = randomBytes(32).toString("base64");
  const emulator = await startSlackEmulator({
    signingSecret,
    ...(options.botScopes ? { seed: { botScopes: options.botScopes } } : {}),
  });
  const dir = mkdtempSync(join(tmpdir(), "onair-test-"));
  const storeUrl = options.storeUrl ?? `sqlite://${join(dir, "onair.sqlite")}`;
  const env: Record<string, string> = {
    PORT: "0",
    SLACK_SIGNING_SECRET: signingSecret,
    SLACK_API_URL: emulator.apiUrl,
    STORE_URL: storeUrl,
    ONAIR_ENCRYPTION_KEY: encryptionKey,
    LOG_LEVEL: "debug",
    ...(options.oauth
      ? {
          SLACK_CLIENT_ID: emulator.clientId,
          SLACK_CLIENT_SECRET: emulator.clientSecret,
          SLACK_STATE_SECRET: randomBytes(16).toString("hex"),
        }
      : { SLACK_BOT_TOKEN: emulator.botToken }),
    ...options.env,
  };
  const logs: string[] = [];
  const logDestination = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  const app = await startApp({
    config: loadConfig(env),
    logDestination,
    retryPolicy: "fast",
    host: "127.0.0.1",
    dataDir: dir,
    ...(options.storeNamespace ? { storeNamespace: options.storeNamespace } : {}),
  });
  emulator.setAppUrl(app.origin);
  const secrets = [signingSecret, emulator.botToken, emulator.clientSecret, encryptionKey];
  if (env.SLACK_STATE_SECRET) secrets.push(env.SLACK_STATE_SECRET);
  return {
    app,
    emulator,
    driver: emulator.driver,
    sandbox: app.sandbox!,
    logs,
    secrets,
    async close() {
      await app.close();
      await emulator.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
