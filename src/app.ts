import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { App } from "@slack/bolt";
import type { DestinationStream } from "pino";
import type { Dispatcher } from "undici";
import type { Config } from "./config.ts";
import type { Deps, LivePort } from "./deps.ts";
import { type ReconcileOptions, reconcileEvents } from "./domain/reconcile.ts";
import { createHealthHandler } from "./http/handlers/health.ts";
import { createMetricsHandler } from "./http/handlers/metrics.ts";
import { createSlackHandler } from "./http/handlers/slack.ts";
import { createWebhookRoute, PLAIN_WEBHOOK_TARGET } from "./http/handlers/webhook.ts";
import { createReadiness } from "./http/readiness.ts";
import { ROUTES, routeLabel } from "./http/routes.ts";
import { createAppServer, type Handler } from "./http/server.ts";
import type { LiveEngineOptions } from "./live/engine.ts";
import { type LiveHost, startLiveHost } from "./live/host.ts";
import { LIVE_REPOSITORIES } from "./live/live-record.ts";
import { createLogger, type Logger } from "./log.ts";
import { createMetrics, type Metrics } from "./metrics.ts";
import { createSandbox, SANDBOX_SEEDS, type Sandbox } from "./sandbox/index.ts";
import { createSlackSide } from "./slack/bolt-app.ts";
import { stepRunRepo } from "./slack/functions/run.ts";
import { registerListeners } from "./slack/index.ts";
import { slackStartError } from "./slack/start-error.ts";
import { viewOnceRepo } from "./slack/views/once.ts";
import {
  checkEncryptionKey,
  createCipher,
  KEY_FILE,
  loadOrCreateKey,
  openStore,
  type Store,
} from "./store/index.ts";
import { storeStartError } from "./store/start-error.ts";
import { createEventsClient } from "./upstream/events/client.ts";
import { createTokenManager } from "./upstream/events/tokens.ts";
import { createHttp, RETRY_POLICIES } from "./upstream/http.ts";
import { createRelayClient } from "./upstream/relay/client.ts";

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

/** How long a store may take to say whether it has seen a Slack event id. */
const EVENT_DEDUPE_MS = 60 * 60_000;
/**
 * How long a stop waits for requests and Slack listeners in flight before it closes the store
 * under them: within the 10 s a container gets between SIGTERM and SIGKILL, beside the live
 * engine's own stop.
 */
const DRAIN_MS = 4_000;

/**
 * The composition root: config → store → upstream clients → Bolt → one HTTP server → the live
 * engine. The server listens first, so that with PORT=0 the sandbox and webhook URLs name the
 * real port; until every part is up its Slack and webhook routes and /readyz answer 503
 * (http/readiness.ts). Nothing below this file builds its own dependencies.
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

  const key = await loadOrCreateKey({
    configured: config.encryptionKey,
    mode: config.mode,
    dataDir: options.dataDir ?? "data",
  });
  const previousKeys = config.previousEncryptionKey ? [config.previousEncryptionKey] : [];
  const cipher = createCipher(key, previousKeys);
  // The engine in a thread of its own has a connection of its own, which checkpoints SQLite's log.
  const inThread = (options.liveEngine ?? "thread") === "thread" && config.store.kind !== "memory";
  const store = await openStore(config.store.url, {
    cipher,
    repositories: [...LIVE_REPOSITORIES, viewOnceRepo, stepRunRepo],
    logger,
    sqliteCheckpoints: inThread ? "elsewhere" : "here",
    ...(options.storeNamespace ? { namespace: options.storeNamespace } : {}),
  }).catch((err: unknown) => {
    throw storeStartError(err, config);
  });
  closers.push(() => store.close());
  try {
    // A key that does not open the store's secrets is refused here, not at a user's first act.
    const keyCheck = await checkEncryptionKey(
      store,
      cipher,
      config.encryptionKey
        ? "ONAIR_ENCRYPTION_KEY"
        : `the key in ${options.dataDir ?? "data"}/${KEY_FILE}`,
    );
    if (keyCheck === "resealed") {
      logger.info(
        "encryption key: the store's canary is sealed with the new key now; run npm run rekey to seal every value with it",
      );
    }
  } catch (err) {
    await store.close().catch(() => {});
    throw err;
  }

  const sandbox = config.upstream.sandbox
    ? createSandbox({
        now,
        logger: logger.child({ component: "sandbox" }),
        ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
        ...(options.sandboxStateFile ? { stateFile: options.sandboxStateFile } : {}),
      })
    : undefined;
  if (sandbox && config.mode === "slack") {
    logger.warn(
      "ONAIR_SANDBOX=1: the embedded sandbox and its unauthenticated control API are served on this port; anyone who reaches it can drive fake states and joins. For tests and demos only.",
    );
  }

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
  const handlers: Handler[] = [
    createHealthHandler({ logger, ready: () => store.ping(), refusal: gate.refusal }),
    createMetricsHandler(metrics, config.metricsToken),
    webhook.handler,
    createSlackHandler({
      logger,
      metrics,
      listener: slack.serving ? slack.receiver.requestListener : undefined,
      signingSecret,
      now,
      firstDelivery: (eventId) => store.claimOnce(`slack-event:${eventId}`, EVENT_DEDUPE_MS),
      refusal: gate.refusal,
    }),
  ];
  if (sandbox) {
    handlers.push(
      (req, res, url) => url.pathname.startsWith(ROUTES.sandbox) && sandbox.handle(req, res),
    );
  }
  if (options.playground) {
    const page = options.playground;
    handlers.push(page, (_req, res, url) => {
      if (url.pathname !== "/") return false;
      res.writeHead(302, { location: ROUTES.playground }).end();
      return true;
    });
  }
  const server = createAppServer({
    logger,
    metrics,
    handlers,
    fast: {
      target: PLAIN_WEBHOOK_TARGET,
      route: routeLabel(ROUTES.webhook),
      handle: webhook.direct,
    },
  });
  // In flight from the request until its response closes (answered, or the client gone); one
  // shared listener, no promise or closure per request.
  const leave = gate.leave;
  server.on("request", (_req, res) => {
    gate.enter();
    res.on("close", leave);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, options.host ?? "0.0.0.0", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;
  // With PORT=0 the default PUBLIC_URL (http://localhost:0) names no real port; a given one wins.
  const publicUrl = /^http:\/\/localhost:0$/.test(config.publicUrl) ? origin : config.publicUrl;
  const effective: Config = { ...config, port, publicUrl };

  const http = createHttp({
    ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    retryPolicy: RETRY_POLICIES[options.retryPolicy ?? "default"],
    logger,
    onCall: (m) => {
      metrics.upstreamCalls.inc({
        service: m.service,
        route: m.route,
        status: String(m.status ?? "error"),
      });
      metrics.upstreamSeconds.observe({ service: m.service, route: m.route }, m.ms / 1000);
    },
  });
  closers.push(() => http.close());
  const relay = createRelayClient({
    baseUrl: config.upstream.relayBaseUrl ?? `${origin}${ROUTES.sandbox}relay`,
    http,
  });
  const events = createEventsClient({
    baseUrl: config.upstream.eventsBaseUrl ?? `${origin}${ROUTES.sandbox}events`,
    http,
  });
  const tokens = createTokenManager({ events, cache: store.tokens.cache, now });

  const live: LivePort = {
    nudge: () => engine?.nudge(),
    forgetSubscription: (id) => engine?.forgetSubscription(id),
    figures: async (team, eventId) => engine?.figures(team, eventId),
    snapshot: async (team, eventId) => engine?.snapshot(team, eventId),
    announce: async (team, channel, text) => engine?.announce(team, channel, text),
  };
  const usesSandbox = !config.upstream.relayBaseUrl || !config.upstream.eventsBaseUrl;
  const deps: Deps = {
    config: effective,
    logger,
    metrics,
    store,
    relay,
    events,
    tokens,
    sandboxed: usesSandbox,
    defaultCredentials: usesSandbox ? SANDBOX_SEEDS : undefined,
    now,
    webhookUrl: (id) => `${publicUrl.replace(/\/+$/, "")}${ROUTES.webhook}${id}`,
    bulkClient: (teamId) => slack.bulkClient(teamId),
    live,
    onClose(fn) {
      closers.push(fn);
    },
  };
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
  let stopReconcile: () => Promise<void> = async () => {};
  if (options.reconcile !== false) {
    const stop = new AbortController();
    const done = reconcileEvents(deps, { ...options.reconcile, signal: stop.signal })
      .then((o) => {
        if (o.checked + o.skipped > 0) logger.info(o, "reconciled events with the events service");
      })
      .catch((err: unknown) => logger.warn({ err }, "reconcile at start did not finish"));
    stopReconcile = async () => {
      stop.abort();
      await done;
    };
  }

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
      // The mirror of the start: Slack, webhooks and /readyz answer 503 from here on (a load
      // balancer moves on), what is in flight finishes (the port stays open meanwhile: a listener
      // may still call the embedded sandbox on it), then the port and the parts close.
      gate.close();
      const reconciled = stopReconcile();
      if (!(await gate.drained(DRAIN_MS))) {
        logger.warn(`stopping with work still in flight after ${DRAIN_MS} ms`);
      }
      let waited: NodeJS.Timeout | undefined;
      await Promise.race([
        reconciled,
        new Promise<void>((resolve) => {
          waited = setTimeout(resolve, DRAIN_MS);
        }),
      ]);
      clearTimeout(waited);
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await stopped;
      // A closer that hangs (a store that is down, a peer that never answers) must not keep the
      // process from exiting: each gets a bounded time.
      for (const fn of closers.reverse()) {
        let timer: NodeJS.Timeout | undefined;
        try {
          await Promise.race([
            fn(),
            new Promise<void>((_, reject) => {
              timer = setTimeout(() => reject(new Error("timed out after 5 s")), 5_000);
            }),
          ]);
        } catch (err) {
          logger.warn({ err }, "error while closing");
        } finally {
          clearTimeout(timer);
        }
      }
    },
  };
}
