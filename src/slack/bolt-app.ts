import { randomUUID } from "node:crypto";
import { type AllMiddlewareArgs, type AnyMiddlewareArgs, App, HTTPReceiver } from "@slack/bolt";
import { WebClient } from "@slack/web-api";
import type { Config } from "../config.ts";
import { ROUTES } from "../http/routes.ts";
import type { Logger } from "../log.ts";
import type { Metrics } from "../metrics.ts";
import { NoInstallationError, SLACK_CALL_TIMEOUT_MS } from "../slack-errors.ts";
import type { Store } from "../store/index.ts";
import { boltLogger } from "./bolt-logger.ts";
import { tellAdminsRotationRefused } from "./home.ts";
import {
  createInstallationStore,
  type RotatingInstallationStore,
  singleFlightAuthorize,
} from "./installation-store.ts";
import { workspacesOf } from "./org-workspaces.ts";
import { botScopes } from "./scopes.ts";
import { countingFetch } from "./slack-metrics.ts";
import { actingWorkspace, enterpriseOf, isOrgInstall } from "./workspace.ts";

export interface SlackSide {
  readonly bolt: App;
  readonly receiver: HTTPReceiver;
  /** Whether Slack requests can be served (a bot token or OAuth is configured). */
  readonly serving: boolean;
  /** See Deps.bulkClient. */
  bulkClient(teamId: string): Promise<WebClient>;
  /**
   * Starts refreshing rotating tokens on a schedule (due ones even when no request comes in) and
   * moving long-lived ones over; returns what stops it.
   */
  startRotation(): () => Promise<void>;
}

/** What a person from another organization is told when their own workspace has no On Air. */
export const FOREIGN_WORKSPACE_TEXT =
  "This channel is shared with another organization, and On Air here acts for this workspace's own members only. Use On Air from your own workspace (ask its admins to install it there).";

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
  /** The bulk clients' bound (the inline live engine's: LiveEngineOptions.slackCallTimeoutMs). */
  bulkCallTimeoutMs?: number | undefined;
}): SlackSide {
  const { config, store, logger, metrics } = opts;
  const oauth = config.slack.oauth;
  const apiUrl = config.slack.apiUrl;
  const boltLog = boltLogger(logger);
  const instanceId = randomUUID();
  const apiClient = (token: string, timeout = SLACK_CALL_TIMEOUT_MS) =>
    new WebClient(token, {
      ...(apiUrl ? { slackApiUrl: apiUrl } : {}),
      rejectRateLimitedCalls: true,
      retryConfig: { retries: 0 },
      timeout,
      logger: boltLog,
    });
  const installations = oauth
    ? createInstallationStore(store, {
        clientId: oauth.clientId,
        clientSecret: oauth.clientSecret,
        apiUrl,
        instanceId,
        logger,
        onRefused: async (owner, token) => {
          // An org's token lists people per workspace (users.list needs team_id with it).
          const org = (await store.installations.get(owner))?.isEnterpriseInstall === true;
          const teams = org ? await workspacesOf(store, owner) : [undefined];
          await tellAdminsRotationRefused(apiClient(token), owner, teams, logger);
        },
      })
    : undefined;
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
          installationStore: installations as RotatingInstallationStore,
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

  // Workspaces seen to belong to an org, by this app (the store remembers them too).
  const orgWorkspaces = new Map<string, string>();
  bolt.use(async (args) => resolveWorkspace(args, installations, orgWorkspaces, logger));

  const bulkClients = new Map<string, WebClient>();
  return {
    bolt,
    receiver,
    serving: Boolean(config.slack.botToken || oauth),
    async bulkClient(teamId) {
      // Through the installation store, so a rotating token is refreshed (once, by one
      // instance) before it is used, and a workspace of an org-wide install posts with the org's.
      let token = config.slack.botToken;
      if (!token && installations) {
        try {
          token = await installations.botToken(teamId);
        } catch (err) {
          logger.warn({ err, teamId }, "no token to post with");
          throw err;
        }
      }
      if (!token) {
        logger.info({ teamId }, "no installation to post with");
        throw new NoInstallationError(teamId);
      }
      const cached = bulkClients.get(teamId);
      if (cached && cached.token === token) return cached;
      const client = apiClient(token, opts.bulkCallTimeoutMs);
      bulkClients.set(teamId, client);
      return client;
    },
    startRotation() {
      if (!installations) return async () => {};
      let timer: NodeJS.Timeout | undefined;
      let wakeAt = Number.POSITIVE_INFINITY;
      let sweeping = false;
      let stopped = false;
      let running: Promise<void> = Promise.resolve();
      const arm = (inMs: number) => {
        if (stopped || sweeping || Date.now() + inMs >= wakeAt) return;
        clearTimeout(timer);
        wakeAt = Date.now() + inMs;
        timer = setTimeout(tick, inMs);
        timer.unref();
      };
      const tick = () => {
        sweeping = true;
        wakeAt = Number.POSITIVE_INFINITY;
        running = installations
          .sweep()
          .catch((err: unknown) => {
            logger.warn({ err }, "rotation: the sweep failed; tried again soon");
            return 5_000;
          })
          .then((nextMs) => {
            sweeping = false;
            arm(nextMs);
          });
      };
      // A token seen in use (an install, a peer's refresh) may be due before the next sweep.
      installations.onDue = arm;
      tick();
      return async () => {
        stopped = true;
        installations.onDue = undefined;
        clearTimeout(timer);
        await running;
      };
    },
  };
}

/**
 * Global middleware, before every listener: puts the acting workspace (workspace.ts) into
 * `context.teamId`, so listeners read one answer. A person from another organization (a Slack
 * Connect channel) acts under their own workspace's records when it has On Air, and is told
 * plainly to use their own workspace otherwise.
 */
async function resolveWorkspace(
  args: AnyMiddlewareArgs & AllMiddlewareArgs,
  installations: RotatingInstallationStore | undefined,
  orgWorkspaces: Map<string, string>,
  logger: Logger,
): Promise<void> {
  const { body, context, next } = args;
  const acting = actingWorkspace(body);
  const installed = context.teamId;
  if (isOrgInstall(body)) {
    const enterprise = enterpriseOf(body) ?? context.enterpriseId;
    if (
      acting &&
      enterprise &&
      !(await inOrg(args, acting, enterprise, { installations, orgWorkspaces }, logger))
    ) {
      // A person of another organization in a channel shared with the org.
      if (installations && (await installations.hasInstallation(acting))) {
        context.teamId = acting;
        await next();
        return;
      }
      logger.info({ team: acting, enterprise }, "a person from another organization was sent home");
      await refuseForeign(args);
      return;
    }
    if (acting) context.teamId = acting;
    await next();
    return;
  }
  const isEvent = (body as { type?: unknown }).type === "event_callback";
  if (isEvent || !acting || !installed || acting === installed) {
    await next();
    return;
  }
  if (installations && (await installations.hasInstallation(acting))) {
    context.teamId = acting;
    await next();
    return;
  }
  if (context.enterpriseId) {
    // A workspace install inside an Enterprise organization: the person may well be of the
    // same org (another of its workspaces), which the payload cannot tell. They act here,
    // where the directory grants no admin rights to anyone whose own workspace is another.
    await next();
    return;
  }
  logger.info({ team: acting, installed }, "a person from another workspace was sent home");
  await refuseForeign(args);
}

/**
 * Whether the acting workspace is one of the org's: known from before, else the person's
 * users.info says which enterprise they belong to (a person of another organization in a
 * shared channel belongs to none, or another). A lookup that fails lets the request through
 * unremembered: the directory still grants no admin rights across workspaces.
 */
async function inOrg(
  args: AnyMiddlewareArgs & AllMiddlewareArgs,
  team: string,
  enterprise: string,
  known: {
    installations: RotatingInstallationStore | undefined;
    orgWorkspaces: Map<string, string>;
  },
  logger: Logger,
): Promise<boolean> {
  const { installations, orgWorkspaces } = known;
  if (team === enterprise || orgWorkspaces.get(team) === enterprise) return true;
  if (installations && (await installations.orgOf(team)) === enterprise) {
    orgWorkspaces.set(team, enterprise);
    return true;
  }
  // An event names the workspace it happened in (context_team_id), whoever set it off; an
  // interaction names the person's own, which users.info confirms is one of the org's.
  const user = args.context.userId;
  if ((args.body as { type?: unknown }).type !== "event_callback") {
    if (!user) return true;
    let member: boolean;
    try {
      const res = await args.client.users.info({ user });
      const u = res.user as { enterprise_user?: { enterprise_id?: string } };
      member = u?.enterprise_user?.enterprise_id === enterprise;
    } catch (err) {
      logger.warn({ err, team }, "could not tell whether a workspace is the org's; let through");
      return true;
    }
    if (!member) return false;
  }
  if (orgWorkspaces.size > 10_000) orgWorkspaces.clear();
  orgWorkspaces.set(team, enterprise);
  await installations
    ?.rememberOrgWorkspace(team, enterprise)
    .catch((err: unknown) => logger.warn({ err }, "the org's workspace was not remembered"));
  return true;
}

async function refuseForeign(args: AnyMiddlewareArgs & AllMiddlewareArgs): Promise<void> {
  const a = args as AnyMiddlewareArgs &
    AllMiddlewareArgs & {
      ack?: (r?: unknown) => Promise<void>;
      respond?: (m: unknown) => Promise<unknown>;
    };
  const body = a.body as { type?: string; command?: string; trigger_id?: string };
  const notice = {
    type: "modal" as const,
    title: { type: "plain_text" as const, text: "On Air" },
    close: { type: "plain_text" as const, text: "Close" },
    blocks: [{ type: "section", text: { type: "mrkdwn", text: FOREIGN_WORKSPACE_TEXT } }],
  };
  if (body.command) {
    await a.ack?.({ response_type: "ephemeral", text: FOREIGN_WORKSPACE_TEXT });
    return;
  }
  if (body.type === "view_submission") {
    await a.ack?.({ response_action: "update", view: notice });
    return;
  }
  await a.ack?.();
  if (a.respond && body.type === "block_actions") {
    await a.respond({
      response_type: "ephemeral",
      replace_original: false,
      text: FOREIGN_WORKSPACE_TEXT,
    });
  } else if (body.trigger_id) {
    await a.client.views.open({ trigger_id: body.trigger_id, view: notice });
  }
}
