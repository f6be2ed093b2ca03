import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { App, HTTPReceiver } from "@slack/bolt";
import { WebClient } from "@slack/web-api";
import type { DestinationStream } from "pino";
import type { Dispatcher } from "undici";
import type { Config } from "./config.ts";
import type { Deps } from "./deps.ts";
import { createAppServer } from "./http/server.ts";
import { startLiveWorker } from "./live/runtime.ts";
import { createWebhookHandler } from "./live/webhook.ts";
import { createLogger, type Logger } from "./log.ts";
import { createMetrics, type Metrics } from "./metrics.ts";
import { createSandbox, type Sandbox } from "./sandbox/index.ts";
import { boltLogger } from "./slack/bolt-logger.ts";
import { countingFetch } from "./slack/core/slack-metrics.ts";
import { registerListeners } from "./slack/index.ts";
import { createInstallationStore, singleFlightAuthorize } from "./slack/installation-store.ts";
import { botScopes } from "./slack/scopes.ts";
import { createCipher, loadOrCreateKey, openStore, type Store } from "./store/index.ts";
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
  playground?: Parameters<typeof createAppServer>[0]["playground"];
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
  close(): Promise<void>;
}

/**
 * The composition root: config → store → upstream clients → Bolt → one HTTP server. The server
 * listens first, so that with PORT=0 the sandbox and webhook URLs name the real port.
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
  const store = await openStore(config.store.url, {
    cipher: createCipher(key),
    logger,
    ...(options.storeNamespace ? { namespace: options.storeNamespace } : {}),
  });
  closers.push(() => store.close());

  const sandboxed = !config.upstream.relayBaseUrl || !config.upstream.eventsBaseUrl;
  const sandbox = sandboxed
    ? createSandbox({
        now,
        logger: logger.child({ component: "sandbox" }),
        ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
      })
    : undefined;

  const signingSecret = config.slack.signingSecret ?? randomBytes(32).toString("hex");
  const oauth = config.slack.oauth;
  const apiUrl = config.slack.apiUrl;
  const boltLog = boltLogger(logger);
  const receiver = new HTTPReceiver({
    signingSecret,
    endpoints: ["/slack/events"],
    logger: boltLog,
    // Listeners ack themselves within milliseconds; this only catches one that forgets.
    unhandledRequestTimeoutMillis: 2_500,
    ...(oauth
      ? {
          clientId: oauth.clientId,
          clientSecret: oauth.clientSecret,
          stateSecret: oauth.stateSecret,
          scopes: botScopes(),
          installationStore: createInstallationStore(store),
          installerOptions: {
            installPath: "/slack/install",
            redirectUriPath: "/slack/oauth_redirect",
            directInstall: true,
            stateVerification: true,
            // A token refresh runs before the ack: a few quick retries, not Slack's default
            // of ten over half an hour.
            clientOptions: {
              ...(apiUrl ? { slackApiUrl: apiUrl } : {}),
              retryConfig: { retries: 2, factor: 1.5, minTimeout: 100, maxTimeout: 500 },
            },
            ...(apiUrl
              ? { authorizationUrl: new URL("/oauth/v2/authorize", apiUrl).toString() }
              : {}),
          },
        }
      : {}),
  });
  const installer = receiver.installer;
  if (installer) installer.authorize = singleFlightAuthorize(installer.authorize.bind(installer));
  const bolt = new App({
    receiver,
    logger: boltLog,
    deferInitialization: true,
    ...(config.slack.botToken ? { token: config.slack.botToken } : {}),
    clientOptions: {
      ...(apiUrl ? { slackApiUrl: apiUrl } : {}),
      fetch: countingFetch(metrics),
      retryConfig: { retries: 2, factor: 1.5, minTimeout: 200, maxTimeout: 1_000 },
    },
  });

  // Late-bound: the server must listen before the clients know the sandbox's port.
  let depsRef: Deps | undefined;
  const server = createAppServer({
    logger,
    metrics,
    ready: () => store.ping(),
    now,
    slack: config.slack.botToken || oauth ? receiver.requestListener : undefined,
    sandbox,
    playground: options.playground,
    webhook: createWebhookHandler(() => depsRef),
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
    baseUrl: config.upstream.relayBaseUrl ?? `${origin}/_sandbox/relay`,
    http,
  });
  const events = createEventsClient({
    baseUrl: config.upstream.eventsBaseUrl ?? `${origin}/_sandbox/events`,
    http,
  });
  const tokens = createTokenManager({ events, cache: store.tokens.cache, now });

  const bulkClients = new Map<string, WebClient>();
  const deps: Deps = {
    config: effective,
    logger,
    metrics,
    store,
    relay,
    events,
    tokens,
    sandboxed,
    now,
    async bulkClient(teamId) {
      // Through the installer, so a rotating token is refreshed (once) before it is used.
      const token =
        config.slack.botToken ??
        (installer
          ? (
              await installer.authorize({
                teamId,
                enterpriseId: undefined,
                isEnterpriseInstall: false,
              })
            ).botToken
          : undefined);
      if (!token) throw new Error(`no bot token for team ${teamId}`);
      const cached = bulkClients.get(teamId);
      if (cached && cached.token === token) return cached;
      const client = new WebClient(token, {
        ...(apiUrl ? { slackApiUrl: apiUrl } : {}),
        rejectRateLimitedCalls: true,
        retryConfig: { retries: 0 },
        logger: boltLog,
      });
      bulkClients.set(teamId, client);
      return client;
    },
    onClose(fn) {
      closers.push(fn);
    },
  };
  depsRef = deps;
  registerListeners(bolt, depsRef);
  startLiveWorker(deps);
  await bolt.init();
  if (sandbox) closers.push(() => sandbox.close());

  let closed = false;
  return {
    origin,
    config: effective,
    deps,
    server,
    bolt,
    sandbox,
    logger,
    metrics,
    store,
    async close() {
      if (closed) return;
      closed = true;
      server.closeIdleConnections();
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      const force = setTimeout(() => server.closeAllConnections(), 2_000);
      force.unref();
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
