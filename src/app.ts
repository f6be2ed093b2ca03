import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import type { App } from "@slack/bolt";
import type { DestinationStream } from "pino";
import type { Dispatcher } from "undici";
import {
  depsOf,
  openCheckedStore,
  reconcileInBackground,
  sandboxOf,
  serve,
  stopInOrder,
  upstreamOf,
} from "./app-phases.ts";
import type { Config } from "./config.ts";
import type { Deps } from "./deps.ts";
import type { ReconcileOptions } from "./domain/reconcile.ts";
import { createWebhookRoute } from "./http/handlers/webhook.ts";
import { createReadiness } from "./http/readiness.ts";
import type { Handler } from "./http/server.ts";
import type { LiveEngineOptions } from "./live/engine.ts";
import { type LiveHost, startLiveHost } from "./live/host.ts";
import { createLogger, type Logger } from "./log.ts";
import { createMetrics, type Metrics } from "./metrics.ts";
import type { Sandbox } from "./sandbox/index.ts";
import { createSlackSide } from "./slack/bolt-app.ts";
import { registerListeners } from "./slack/index.ts";
import { slackStartError } from "./slack/start-error.ts";
import type { Store } from "./store/index.ts";
import type { RETRY_POLICIES } from "./upstream/http.ts";

export interface StartAppOptions {
  config: Config;
  /** Log lines go here (tests capture and scan them). Default stdout. */
  logDestination?: DestinationStream;
  now?: () => number;
  /** For upstream calls and the sandbox's webhook deliveries. */
  dispatcher?: Dispatcher;
  /** Where playground files (the generated encryption key) live. Default "data". */
  dataDir?: string;
  /** Prefix for every store key; tests sharing one Redis use one per file. */
  storeNamespace?: string;
  /** "fast" in tests: ms-scale backoff. */
  retryPolicy?: keyof typeof RETRY_POLICIES;
  host?: string;
  /** Mounted on the server in playground mode (the page and the emulator's routes). */
  playground?: Handler;
  /**
   * Where the live engine runs: "thread" (its own worker thread, off the event loop that answers
   * requests; the default except on the memory store, which no other thread can open) or
   * "inline". Tests that watch the engine's store calls from this thread choose inline.
   */
  liveEngine?: "thread" | "inline";
  /** The engine's timings (tests). */
  liveOptions?: LiveEngineOptions;
  /**
   * At start, ask the events service about the events still alive here and mark gone the ones
   * it no longer has (domain/reconcile.ts), paced in the background. Default on; false skips it.
   */
  reconcile?: false | Omit<ReconcileOptions, "signal">;
  /** The embedded sandbox keeps its events here across restarts (the playground: in data/). */
  sandboxStateFile?: string;
}

export interface OnAirApp {
  readonly origin: string;
  readonly config: Config;
  readonly deps: Deps;
  readonly server: Server;
  readonly bolt: App;
  readonly sandbox: Sandbox | undefined;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly store: Store;
  readonly live: LiveHost;
  close(): Promise<void>;
}

/**
 * The composition root: config → the store (and its key) → the sandbox → Bolt → one HTTP server →
 * the upstream clients → the listeners → the live engine → the reconcile. The server listens
 * first, so that with PORT=0 the sandbox and webhook URLs name the real port; until every part
 * is up its Slack and webhook routes and /readyz answer 503 (http/readiness.ts). Nothing below
 * this file builds its own dependencies; each longer phase is a function of app-phases.ts, called
 * here in the order it runs. What ties the parts together stays here: the readiness gate, the
 * engine bound late, the closers, and what each failure lets go of.
 */
export async function startApp(options: StartAppOptions): Promise<OnAirApp> {
  const config = options.config;
  if (config.mode === "slack" && !config.slack.signingSecret) {
    // Without it no request could be verified; refusing to start beats accepting forgeries.
    throw new Error("SLACK_SIGNING_SECRET is required to serve a Slack workspace");
  }
  const now = options.now ?? Date.now;
  const logger = createLogger({
    level: config.logLevel,
    ...(options.logDestination ? { destination: options.logDestination } : {}),
  });
  const metrics = createMetrics({ defaultMetrics: true });
  const closers: Array<() => Promise<void> | void> = [];

  const { store, key, previousKeys, inThread } = await openCheckedStore(config, options, logger);
  closers.push(() => store.close());

  const sandbox = sandboxOf(config, options, logger, now);

  const signingSecret = config.slack.signingSecret ?? randomBytes(32).toString("hex");
  const side = { config, signingSecret, store, logger, metrics };
  const bulk = inThread ? undefined : options.liveOptions?.slackCallTimeoutMs;
  const slack = createSlackSide({ ...side, bulkCallTimeoutMs: bulk });
  // Bolt's authorization (auth.test with a bot token) before the port opens: a token Slack
  // refuses stops the start here, in one line naming it.
  try {
    await slack.bolt.init();
  } catch (err) {
    await Promise.allSettled([store.close(), sandbox?.close()]);
    throw slackStartError(err, config);
  }
  const gate = createReadiness();
  // A listener runs on after its ack; a stop waits for it before the store closes.
  const processEvent = slack.bolt.processEvent.bind(slack.bolt);
  slack.bolt.processEvent = (event) => gate.track(processEvent(event));

  // Late-bound: the server listens before the engine exists (its URLs need the bound port).
  let engine: LiveHost | undefined;
  const webhook = createWebhookRoute({
    metrics,
    ingest: () => engine?.ingest,
    refusal: gate.refusal,
  });
  const { server, origin, port } = await serve({
    config,
    options,
    logger,
    metrics,
    store,
    gate,
    webhook,
    slack,
    sandbox,
    signingSecret,
    now,
  }).catch(async (err: unknown) => {
    // Nothing was served (the port taken, say): let go of what is open, then say why.
    await Promise.allSettled([store.close(), sandbox?.close()]);
    throw err;
  });
  // With PORT=0 the default PUBLIC_URL (http://localhost:0) names no real port; a given one wins.
  const publicUrl = /^http:\/\/localhost:0$/.test(config.publicUrl) ? origin : config.publicUrl;
  const effective: Config = { ...config, port, publicUrl };

  const { http, relay, events, tokens } = upstreamOf(options, logger, metrics, origin, store, now);
  closers.push(() => http.close());

  const deps = depsOf({
    config: effective,
    logger,
    metrics,
    store,
    upstream: { relay, events, tokens },
    now,
    slack,
    engine: () => engine,
    closers,
  });
  registerListeners(slack.bolt, deps);
  engine = await startLiveHost(deps, {
    thread: inThread
      ? {
          storeUrl: config.store.url,
          storeNamespace: options.storeNamespace,
          key: new Uint8Array(key),
          previousKeys: previousKeys.map((k) => new Uint8Array(k)),
          logLevel: config.logLevel,
          slackApiUrl: config.slack.apiUrl,
        }
      : false,
    ...(options.liveOptions ? { engine: options.liveOptions } : {}),
  }).catch(async (err: unknown) => {
    // Nothing was served (the gate is closed): let go of the port and the parts, then say why.
    server.close();
    server.closeAllConnections();
    for (const fn of closers.reverse()) await Promise.resolve(fn()).catch(() => {});
    await sandbox?.close().catch(() => {});
    throw err;
  });
  const host = engine;
  closers.push(() => host.stop());
  closers.push(slack.startRotation());
  if (sandbox) closers.push(() => sandbox.close());
  // Store, Bolt's authorization, the listeners and the live engine are all up: take work.
  gate.open();
  // The start's reconcile calls the events service, which may be the sandbox on this very port:
  // it is stopped (and its call in flight finished) before the port closes, not after, or that
  // call would fail against a closed port and be retried and warned about on every stop.
  const stopReconcile =
    options.reconcile === false ? async () => {} : reconcileInBackground(deps, options.reconcile);

  let closed = false;
  return {
    origin,
    config: effective,
    deps,
    server,
    bolt: slack.bolt,
    sandbox,
    logger,
    metrics,
    store,
    live: engine,
    async close() {
      if (closed) return;
      closed = true;
      await stopInOrder({ gate, stopReconcile, server, closers, logger });
    },
  };
}
