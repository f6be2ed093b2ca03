import type { WebClient } from "@slack/web-api";
import type { Deps } from "../deps.ts";
import { SANDBOX_SEEDS } from "../sandbox/index.ts";
import type { Audience, Settings, UserLink } from "../store/index.ts";
import { EventsError } from "../upstream/errors.ts";
import type { AppCredentials } from "../upstream/events/client.ts";
import type { UserToken } from "../upstream/events/tokens.ts";
import type { BasicCredentials } from "../upstream/relay/client.ts";

/**
 * Who may do what, and with which upstream credentials: the checks every workflow runs before
 * it talks upstream. Each refusal is a UserFacingError whose userMessage is one plain sentence
 * and a next step.
 */

export const USER_ERROR_CODES = {
  notConfigured: "not_configured",
  notLinked: "not_linked",
  notAllowed: "not_allowed",
  notFound: "not_found",
  invalid: "invalid",
} as const;
export type UserErrorCode = (typeof USER_ERROR_CODES)[keyof typeof USER_ERROR_CODES];

export class UserFacingError extends Error {
  override readonly name = this.constructor.name;
  constructor(
    readonly code: UserErrorCode,
    readonly userMessage: string,
    options?: { cause?: unknown },
  ) {
    super(`${code}: ${userMessage}`, options);
  }
}

/**
 * The team's settings. With the embedded sandbox, missing credentials read as the sandbox's
 * seeded ones, so the playground and a fresh install work before anyone opens settings.
 */
export async function effectiveSettings(deps: Deps, team: string): Promise<Settings> {
  const s = await deps.store.settings.getOrDefault(team);
  if (!deps.sandboxed) return s;
  return {
    ...s,
    eventsAppKey: s.eventsAppKey ?? SANDBOX_SEEDS.events.clientId,
    eventsAppSecret: s.eventsAppSecret ?? SANDBOX_SEEDS.events.clientSecret,
    relayUsername: s.relayUsername ?? SANDBOX_SEEDS.relay.username,
    relayPassword: s.relayPassword ?? SANDBOX_SEEDS.relay.password,
  };
}

const NOT_CONFIGURED_EVENTS =
  "On Air isn't connected to your live events service yet. A workspace admin can add the events app key and secret with `/onair settings`.";
const NOT_CONFIGURED_RELAY =
  "On Air has no relay credentials for this workspace yet. A workspace admin can add them with `/onair settings`.";

export function eventsCredentials(settings: Settings): AppCredentials {
  if (!settings.eventsAppKey || !settings.eventsAppSecret) {
    throw new UserFacingError(USER_ERROR_CODES.notConfigured, NOT_CONFIGURED_EVENTS);
  }
  return { clientId: settings.eventsAppKey, clientSecret: settings.eventsAppSecret };
}

export function relayCredentials(settings: Settings): BasicCredentials {
  if (!settings.relayUsername || !settings.relayPassword) {
    throw new UserFacingError(USER_ERROR_CODES.notConfigured, NOT_CONFIGURED_RELAY);
  }
  return { username: settings.relayUsername, password: settings.relayPassword };
}

export interface SlackProfile {
  id: string;
  email: string | undefined;
  tz: string | undefined;
  isAdmin: boolean;
  name: string;
}

/** users.info, read through the interactive client. */
export async function slackProfile(client: WebClient, user: string): Promise<SlackProfile> {
  const res = await client.users.info({ user });
  const u = res.user;
  return {
    id: user,
    email: u?.profile?.email,
    tz: u?.tz,
    isAdmin: Boolean(u?.is_admin || u?.is_owner || u?.is_primary_owner),
    name: u?.real_name || u?.profile?.display_name || u?.name || user,
  };
}

/** True when the user is in the audience: everyone, admins (and owners), or a user group. */
export async function inAudience(
  client: WebClient,
  user: string,
  audience: Audience,
): Promise<boolean> {
  if (audience === "everyone") return true;
  if (audience === "admins") return (await slackProfile(client, user)).isAdmin;
  const res = await client.usergroups.users.list({ usergroup: audience.usergroup });
  if ((res.users ?? []).includes(user)) return true;
  // Admins manage the app; a group policy never locks them out of it.
  return (await slackProfile(client, user)).isAdmin;
}

const ACTION_WORDS = { schedule: "schedule events", mint: "mint relay tokens" } as const;

/** Throws not_allowed, naming who may, when the policy leaves this user out. */
export async function requireAllowed(
  client: WebClient,
  settings: Settings,
  user: string,
  action: keyof typeof ACTION_WORDS,
): Promise<void> {
  const audience =
    action === "schedule" ? settings.policy.whoMaySchedule : settings.policy.whoMayMint;
  if (await inAudience(client, user, audience)) return;
  const who =
    audience === "admins"
      ? "workspace admins"
      : audience === "everyone"
        ? "everyone"
        : `members of <!subteam^${typeof audience === "object" ? audience.usergroup : ""}>`;
  throw new UserFacingError(
    USER_ERROR_CODES.notAllowed,
    `In this workspace only ${who} may ${ACTION_WORDS[action]}. Ask a workspace admin if you need to.`,
  );
}

export async function requireAdmin(client: WebClient, user: string): Promise<SlackProfile> {
  const profile = await slackProfile(client, user);
  if (!profile.isAdmin) {
    throw new UserFacingError(
      USER_ERROR_CODES.notAllowed,
      "Only workspace admins and owners can change On Air's settings. Ask one of them to run `/onair settings`.",
    );
  }
  return profile;
}

/**
 * Links a Slack user to their events-service account by their Slack e-mail: a user_app grant
 * proves the address is a registered user and yields userId and enterpriseId.
 */
export async function linkUser(
  deps: Deps,
  client: WebClient,
  team: string,
  user: string,
): Promise<UserLink> {
  const settings = await effectiveSettings(deps, team);
  const creds = eventsCredentials(settings);
  const profile = await slackProfile(client, user);
  if (!profile.email) {
    throw new UserFacingError(
      USER_ERROR_CODES.notLinked,
      "I can't see an e-mail address on your Slack profile, so I can't find your events account. Ask an admin to check that On Air may read e-mail addresses (users:read.email).",
    );
  }
  let token: UserToken;
  try {
    token = await deps.tokens.userToken(team, profile.email, creds);
  } catch (err) {
    if (err instanceof EventsError && (err.status === 404 || err.status === 400)) {
      throw new UserFacingError(
        USER_ERROR_CODES.notLinked,
        `${profile.email} is not a registered user of your live events service. Ask your events admin to add you, then run \`/onair link\` again.`,
        { cause: err },
      );
    }
    throw err;
  }
  const link: UserLink = {
    email: profile.email,
    userId: token.userId,
    enterpriseId: token.enterpriseId,
    linkedAt: deps.now(),
  };
  await deps.store.users.put(team, user, link);
  return link;
}

/** The user's link; an unlinked user is linked on the fly when their e-mail allows it. */
export async function requireLinked(
  deps: Deps,
  client: WebClient,
  team: string,
  user: string,
): Promise<UserLink> {
  const existing = await deps.store.users.get(team, user);
  if (existing) return existing;
  return linkUser(deps, client, team, user);
}

/** Runs fn with the user's events token; a 401 renews it once (see TokenManager). */
export async function withUserToken<T>(
  deps: Deps,
  team: string,
  link: UserLink,
  fn: (token: UserToken) => Promise<T>,
): Promise<T> {
  const creds = eventsCredentials(await effectiveSettings(deps, team));
  return deps.tokens.withUserToken(team, link.email, creds, fn);
}
