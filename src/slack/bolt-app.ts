import { App, HTTPReceiver } from "@slack/bolt";
import { WebClient } from "@slack/web-api";
import type { Config } from "../config.ts";
import { ROUTES } from "../http/routes.ts";
import type { Logger } from "../log.ts";
import type { Metrics } from "../metrics.ts";
import { NoInstallationError } from "../slack-errors.ts";
import type { Store } from "../store/index.ts";
import { boltLogger } from "./bolt-logger.ts";
import { createInstallationStore, singleFlightAuthorize } from "./installation-store.ts";
import { botScopes } from "./scopes.ts";
import { countingFetch } from "./slack-metrics.ts";

export interface SlackSide {
  readonly bolt: App;
  readonly receiver: HTTPReceiver;
  /** Whether Slack requests can be served (a bot token or OAuth is configured). */
  readonly serving: boolean;
  /** See Deps.bulkClient. */
  bulkClient(teamId: string): Promise<WebClient>;
}

/**
 * Bolt's app and receiver for this configuration (one workspace by bot token, or many by OAuth),
 * and the bulk Web API clients the live engine, reminders and audit lines post with: one per
 * workspace, never Bolt's interactive client, so bulk posting cannot pause a modal.
 */
export function createSlackSide(opts: {
  config: Config;
  signingSecret: string;
  store: Store;
  logger: Logger;
  metrics: Metrics;
}): SlackSide {
  const { config, store, logger, metrics } = opts;
  const oauth = config.slack.oauth;
  const apiUrl = config.slack.apiUrl;
  const boltLog = boltLogger(logger);
  const receiver = new HTTPReceiver({
    signingSecret: opts.signingSecret,
    endpoints: [ROUTES.slackEvents],
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
            installPath: ROUTES.slackInstall,
            redirectUriPath: ROUTES.slackOAuthRedirect,
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

  const bulkClients = new Map<string, WebClient>();
  return {
    bolt,
    receiver,
    serving: Boolean(config.slack.botToken || oauth),
    async bulkClient(teamId) {
      // Through the installer, so a rotating token is refreshed (once) before it is used.
      let token = config.slack.botToken;
      if (!token && installer) {
        try {
          token = (
            await installer.authorize({
              teamId,
              enterpriseId: undefined,
              isEnterpriseInstall: false,
            })
          ).botToken;
        } catch (err) {
          logger.info({ err, teamId }, "no installation to post with");
          throw new NoInstallationError(teamId);
        }
      }
      if (!token) throw new NoInstallationError(teamId);
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
  };
}
