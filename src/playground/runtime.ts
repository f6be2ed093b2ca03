import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { type SlackEmulator, startSlackEmulator } from "@onair/slack-emulator";
import type { DestinationStream } from "pino";
import { type OnAirApp, type StartAppOptions, startApp } from "../app.ts";
import type { Config } from "../config.ts";
import { STEP_DEFINITIONS } from "../slack/functions/definitions.ts";
import { botScopes } from "../slack/scopes.ts";
import { createPlaygroundPage } from "./api.ts";
import { mendSharedChannels, orgSeed } from "./org.ts";
import { createWorkspaceSaver, loadWorkspaceFile, type WorkspaceSaver } from "./persist.ts";

/**
 * Playground mode: the real app, the embedded sandbox, an emulated Slack workspace on an
 * internal loopback port, and the page at /playground. The app talks to the emulator exactly
 * as to Slack (signed requests, Web API over HTTP); nothing in the app knows it is a playground
 * beyond the generated credentials.
 */

export interface PlaygroundOptions {
  /** A playground-mode config (no Slack credentials); its Slack fields are filled in here. */
  readonly config: Config;
  /** Encryption key and the saved workspace live here. Default "data". */
  readonly dataDir?: string;
  readonly logDestination?: DestinationStream;
  readonly host?: string;
  readonly retryPolicy?: StartAppOptions["retryPolicy"];
  /** Keep the emulated workspace in dataDir/playground-workspace.json. Default true. */
  readonly persistWorkspace?: boolean;
  /** How often due scheduled messages (reminders) are posted. Default 5 s. */
  readonly releaseScheduledEveryMs?: number;
  /**
   * Slack's posting pace per channel (chat.postMessage answers 429 with Retry-After beyond it),
   * so the playground shows the app pacing itself. Default the emulator's: about one a second
   * with short bursts, as Slack documents; null turns it off (the per-method tiers stay).
   */
  readonly slackPace?: { perChannelPerSec: number; burst: number } | null;
  /**
   * An Enterprise organization with two workspaces and the app installed org-wide (org.ts).
   * Default: PLAYGROUND_ORG=1 in the environment (npm start passes only the config), else one
   * workspace.
   */
  readonly org?: boolean;
  /** The start's walk over kept events (app.ts); default the app's pace. */
  readonly reconcile?: StartAppOptions["reconcile"];
}

export interface Playground {
  readonly app: OnAirApp;
  readonly emulator: SlackEmulator;
  /** The page, on the address the app listens on. */
  readonly url: string;
  /** The secrets this run generated (none may appear in logs or messages). */
  readonly secrets: readonly string[];
  close(): Promise<void>;
}

export const WORKSPACE_FILE = "playground-workspace.json";
export const SANDBOX_FILE = "playground-sandbox.json";

export async function startPlayground(options: PlaygroundOptions): Promise<Playground> {
  const dataDir = options.dataDir ?? "data";
  const signingSecret = randomBytes(32).toString("hex");
  // The emulated installation holds exactly the manifest's bot scopes, as a real install would.
  const org = options.org ?? process.env.PLAYGROUND_ORG === "1";
  const emulator = await startSlackEmulator({
    signingSecret,
    host: "127.0.0.1",
    seed: org
      ? { ...orgSeed(botScopes()), functions: STEP_DEFINITIONS }
      : { botScopes: botScopes(), functions: STEP_DEFINITIONS },
  });
  const ws = emulator.workspace;
  // Slack's limits are on by default (per-method tiers, the per-channel message rate).
  if (options.slackPace === null) emulator.setRateLimit(undefined);
  else if (options.slackPace !== undefined) emulator.setRateLimit(options.slackPace);

  const file = join(dataDir, WORKSPACE_FILE);
  const persist = options.persistWorkspace !== false;
  let saver: WorkspaceSaver | undefined;
  let loaded: ReturnType<typeof loadWorkspaceFile> = "none";
  if (persist) {
    loaded = loadWorkspaceFile(ws, file);
    if (org) mendSharedChannels(ws);
    saver = createWorkspaceSaver(ws, file);
  }
  // Every Web API call the app makes may change the workspace; saving is debounced.
  const offCall = emulator.onCall(() => saver?.touch());

  let app: OnAirApp | undefined;
  const page = createPlaygroundPage({
    emulator,
    app: () => app,
    onChange: () => saver?.touch(),
    persistence: persist ? { file } : undefined,
  });

  const config: Config = {
    ...options.config,
    mode: "playground",
    slack: {
      ...options.config.slack,
      signingSecret,
      botToken: emulator.botToken,
      oauth: undefined,
      apiUrl: emulator.apiUrl,
    },
  };
  try {
    app = await startApp({
      config,
      dataDir,
      playground: page,
      ...(options.logDestination ? { logDestination: options.logDestination } : {}),
      // The page acts as any seeded user without signing in: keep it to this machine.
      host: options.host ?? "127.0.0.1",
      ...(options.retryPolicy ? { retryPolicy: options.retryPolicy } : {}),
      ...(options.reconcile !== undefined ? { reconcile: options.reconcile } : {}),
      // The sandbox's events live beside the workspace: a restart keeps both, or neither.
      ...(persist ? { sandboxStateFile: join(dataDir, SANDBOX_FILE) } : {}),
    });
  } catch (err) {
    offCall();
    saver?.stop();
    await emulator.close();
    throw err;
  }
  emulator.setAppUrl(app.origin);
  if (loaded === "corrupt") {
    app.logger.warn({ file }, "the saved playground workspace could not be read; starting fresh");
  }

  const releaser = setInterval(() => {
    if (ws.releaseDue().length > 0) saver?.touch();
  }, options.releaseScheduledEveryMs ?? 5_000);
  releaser.unref();

  const port = new URL(app.origin).port;
  const started = app;
  return {
    app: started,
    emulator,
    url: `http://localhost:${port}/playground`,
    secrets: [signingSecret, emulator.botToken, emulator.clientSecret],
    async close() {
      clearInterval(releaser);
      await started.close();
      offCall();
      saver?.flush();
      saver?.stop();
      await emulator.close();
    },
  };
}
