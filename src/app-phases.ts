import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Dispatcher } from "undici";
import type { Config } from "./config.ts";
import type { Deps, LivePort } from "./deps.ts";
import { type ReconcileOptions, reconcileEvents } from "./domain/reconcile.ts";
import { createHealthHandler } from "./http/handlers/health.ts";
import { createMetricsHandler } from "./http/handlers/metrics.ts";
import { createSlackHandler } from "./http/handlers/slack.ts";
import { PLAIN_WEBHOOK_TARGET, type WebhookRoute } from "./http/handlers/webhook.ts";
import type { Readiness } from "./http/readiness.ts";
import { ROUTES, routeLabel } from "./http/routes.ts";
import { createAppServer, type Handler } from "./http/server.ts";
import type { LiveHost } from "./live/host.ts";
import { LIVE_REPOSITORIES } from "./live/live-record.ts";
import type { Logger } from "./log.ts";
import type { Metrics } from "./metrics.ts";
import { createSandbox, SANDBOX_SEEDS, type Sandbox } from "./sandbox/index.ts";
import type { SlackSide } from "./slack/bolt-app.ts";
import { stepRunRepo } from "./slack/functions/run.ts";
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

/**
 * The composition root's phases (app.ts `startApp` runs them in order and holds what they
 * return): the store, opened and its key checked; the embedded sandbox; the one HTTP server,
 * listening; the upstream clients; the deps every listener and the engine are handed; the
 * start's reconcile; and the stop, the start's mirror. Each builds its part from
 * what it is handed (and the store's phase from the key file, when no key is configured), never
 * from what another phase keeps.
 */

/** How long a store may take to say whether it has seen a Slack event id. */
const EVENT_DEDUPE_MS = 60 * 60_000;
/**
 * How long a stop waits for requests and Slack listeners in flight before it closes the store
 * under them: within the 10 s a container gets between SIGTERM and SIGKILL, beside the live
 * engine's own stop.
 */
const DRAIN_MS = 4_000;

/**
 * The encryption key (configured, or the playground's file), the store opened with it, and the
 * key checked against the store's canary: a key that does not open the store's secrets is
 * refused here, not at a user's first act. `inThread`: the live engine runs in a thread of its
 * own, with a connection of its own, which then checkpoints SQLite's log.
 */
export async function openCheckedStore(
  config: Config,
  options: { dataDir?: string; liveEngine?: "thread" | "inline"; storeNamespace?: string },
  logger: Logger,
): Promise<{ store: Store; key: Buffer; previousKeys: Buffer[]; inThread: boolean }> {
  const key = await loadOrCreateKey({
    configured: config.encryptionKey,
    mode: config.mode,
    dataDir: options.dataDir ?? "data",
  });
  const previousKeys = config.previousEncryptionKey ? [config.previousEncryptionKey] : [];
  const cipher = createCipher(key, previousKeys);
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
  try {
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
  return { store, key, previousKeys, inThread };
}

/**
 * The embedded sandbox of both services, when the configuration serves it (always in the
 * playground; with Slack only when ONAIR_SANDBOX=1 asks, and then with a warning).
 */
export function sandboxOf(
  config: Config,
  options: { dispatcher?: Dispatcher; sandboxStateFile?: string },
  logger: Logger,
  now: () => number,
): Sandbox | undefined {
  if (!config.upstream.sandbox) return undefined;
  const sandbox = createSandbox({
    now,
    logger: logger.child({ component: "sandbox" }),
    ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    ...(options.sandboxStateFile ? { stateFile: options.sandboxStateFile } : {}),
  });
  if (config.mode === "slack") {
    logger.warn(
      "ONAIR_SANDBOX=1: the embedded sandbox and its unauthenticated control API are served on this port; anyone who reaches it can drive fake states and joins. For tests and demos only.",
    );
  }
  return sandbox;
}

/**
 * The one HTTP server, listening: health, metrics, the webhook route (its fast path taken before
 * URL parsing), Slack's requests, and the sandbox and playground when they are on. Every request
 * is counted in flight by the readiness gate until its response closes. The server listens
 * before the engine exists, so that with PORT=0 the URLs it hands out name the real port.
 */
export async function serve(parts: {
  config: Config;
  options: { host?: string; playground?: Handler };
  logger: Logger;
  metrics: Metrics;
  store: Store;
  gate: Readiness;
  webhook: WebhookRoute;
  slack: SlackSide;
  sandbox: Sandbox | undefined;
  signingSecret: string;
  now: () => number;
}): Promise<{ server: Server; origin: string; port: number }> {
  const { config, options, logger, metrics, store, gate, webhook, slack, sandbox } = parts;
  const handlers: Handler[] = [
    createHealthHandler({ logger, ready: () => store.ping(), refusal: gate.refusal }),
    createMetricsHandler(metrics, config.metricsToken),
    webhook.handler,
    createSlackHandler({
      logger,
      metrics,
      listener: slack.serving ? slack.receiver.requestListener : undefined,
      signingSecret: parts.signingSecret,
      now: parts.now,
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
  return { server, origin: `http://127.0.0.1:${port}`, port };
}

/**
 * The upstream clients on one HTTP client (its calls counted and timed in the metrics): the
 * relay and the events service, each at its configured URL or the embedded sandbox's on this
 * server, and the events service's token manager.
 */
export function upstreamOf(
  options: {
    config: Config;
    dispatcher?: Dispatcher;
    retryPolicy?: keyof typeof RETRY_POLICIES;
  },
  logger: Logger,
  metrics: Metrics,
  origin: string,
  store: Store,
  now: () => number,
) {
  const { config } = options;
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
  const relay = createRelayClient({
    baseUrl: config.upstream.relayBaseUrl ?? `${origin}${ROUTES.sandbox}relay`,
    http,
  });
  const events = createEventsClient({
    baseUrl: config.upstream.eventsBaseUrl ?? `${origin}${ROUTES.sandbox}events`,
    http,
  });
  const tokens = createTokenManager({ events, cache: store.tokens.cache, now });
  return { http, relay, events, tokens };
}

/**
 * What every listener and the live engine are handed (deps.ts): the parts built so far, the
 * live engine reached through `engine` (it starts after the listeners are registered), and
 * `onClose` adding to the stop's closers.
 */
export function depsOf(parts: {
  config: Config;
  logger: Logger;
  metrics: Metrics;
  store: Store;
  upstream: Pick<Deps, "relay" | "events" | "tokens">;
  now: () => number;
  slack: SlackSide;
  engine: () => LiveHost | undefined;
  closers: Array<() => Promise<void> | void>;
}): Deps {
  const { config, slack, engine, closers } = parts;
  const live: LivePort = {
    nudge: () => engine()?.nudge(),
    forgetSubscription: (id) => engine()?.forgetSubscription(id),
    figures: async (team, eventId) => engine()?.figures(team, eventId),
    snapshot: async (team, eventId) => engine()?.snapshot(team, eventId),
    announce: async (team, channel, text) => engine()?.announce(team, channel, text),
  };
  const usesSandbox = !config.upstream.relayBaseUrl || !config.upstream.eventsBaseUrl;
  return {
    config,
    logger: parts.logger,
    metrics: parts.metrics,
    store: parts.store,
    ...parts.upstream,
    sandboxed: usesSandbox,
    defaultCredentials: usesSandbox ? SANDBOX_SEEDS : undefined,
    now: parts.now,
    webhookUrl: (id) => `${config.publicUrl.replace(/\/+$/, "")}${ROUTES.webhook}${id}`,
    bulkClient: (teamId) => slack.bulkClient(teamId),
    live,
    onClose(fn) {
      closers.push(fn);
    },
  };
}

/**
 * The start's reconcile (domain/reconcile.ts), paced in the background; returns its stop, which
 * aborts it and waits for its call in flight.
 */
export function reconcileInBackground(
  deps: Deps,
  options: Omit<ReconcileOptions, "signal"> | undefined,
): () => Promise<void> {
  const stop = new AbortController();
  const done = reconcileEvents(deps, { ...options, signal: stop.signal })
    .then((o) => {
      if (o.checked + o.skipped > 0) {
        deps.logger.info(o, "reconciled events with the events service");
      }
    })
    .catch((err: unknown) => deps.logger.warn({ err }, "reconcile at start did not finish"));
  return async () => {
    stop.abort();
    await done;
  };
}

/**
 * The mirror of the start: Slack, webhooks and /readyz answer 503 from here on (a load balancer
 * moves on), what is in flight finishes (the port stays open meanwhile: a listener may still
 * call the embedded sandbox on it), then the port, and then the parts in the reverse of the order they were
 * registered (`closers`).
 */
export async function stopInOrder(parts: {
  gate: Readiness;
  stopReconcile: () => Promise<void>;
  server: Server;
  closers: Array<() => Promise<void> | void>;
  logger: Logger;
}): Promise<void> {
  const { gate, server, closers, logger } = parts;
  gate.close();
  const reconciled = parts.stopReconcile();
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
}
