import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import {
  type RateLimits,
  type SlackDriver,
  type SlackEmulator,
  startSlackEmulator,
  type WorkspaceSeed,
} from "@onair/slack-emulator";
import { type OnAirApp, startApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import type { LiveEngineOptions } from "../../src/live/engine.ts";
import type { Sandbox } from "../../src/sandbox/index.ts";
import { botScopes } from "../../src/slack/scopes.ts";

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
  /** Private, and the bot is not in it: it does not exist for the bot. */
  planning: "C0PLANNING",
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
  /** Where the live engine runs (default: its own thread, as in production). */
  liveEngine?: "thread" | "inline";
  /** The live engine's timings (a short lease, say). */
  liveOptions?: LiveEngineOptions;
  /** Default: a fresh SQLite file in a temp dir. */
  storeUrl?: string;
  /** OAuth mode (no bot token): install through the emulator's authorize page. */
  oauth?: boolean;
  env?: Record<string, string>;
  /** Key prefix in a shared store (Redis, Postgres), so parallel test files never collide. */
  storeNamespace?: string;
  /** The bot token's scopes (an install that granted fewer); default: the manifest's. */
  botScopes?: readonly string[];
  /** The emulated workspace (people, channels, groups); default: the emulator's seed. */
  seed?: Omit<WorkspaceSeed, "botScopes">;
  /** Slack's rate limits; default the emulator's (tiers and the per-channel rate on). */
  rateLimits?: RateLimits | false;
  /** Where the embedded sandbox keeps its events, so a restarted app finds them again. */
  sandboxStateFile?: string;
}

/**
 * The real app (Bolt, HTTP on port 0, the embedded sandbox, a real store) against the Slack
 * emulator, with signed requests from the emulator's driver.
 */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const signingSecret = randomBytes(16).toString("hex");
  const encryptionKey = randomBytes(32).toString("base64");
  // The installation holds exactly the scopes it was given: the manifest's, unless a test
  // asks for an install that granted fewer.
  const emulator = await startSlackEmulator({
    signingSecret,
    seed: { ...options.seed, botScopes: options.botScopes ?? botScopes() },
    ...(options.rateLimits !== undefined && { rateLimits: options.rateLimits }),
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
    // The embedded sandbox stands in for both upstream services.
    ONAIR_SANDBOX: "1",
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
    ...(options.liveEngine ? { liveEngine: options.liveEngine } : {}),
    ...(options.liveOptions ? { liveOptions: options.liveOptions } : {}),
    ...(options.sandboxStateFile ? { sandboxStateFile: options.sandboxStateFile } : {}),
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
      const pings = unintendedPings(emulator);
      await emulator.close();
      rmSync(dir, { recursive: true, force: true });
      // Every suite on the harness: the app pinged nobody it did not mean to (its DMs notify
      // their one reader, which is the point of them; nothing else it posts may ping).
      if (pings.length > 0) {
        throw new Error(`the app's messages would ping people: ${JSON.stringify(pings)}`);
      }
    },
  };
}

/** Notifications from the app's messages other than its DMs to their reader. */
export function unintendedPings(emulator: SlackEmulator): unknown[] {
  const bot = emulator.workspace.app.botUserId;
  return emulator.notifications
    .filter((n) => n.author === bot && n.notified && n.kind !== "dm")
    .map((n) => ({
      via: n.via,
      channel: n.channel,
      kind: n.kind,
      target: n.target,
      users: n.users,
    }));
}
