import type { Deps } from "../deps.ts";
import { slackErrorName } from "../slack-errors.ts";
import type { Audience, Settings, UserLink } from "../store/index.ts";
import { EventsError } from "../upstream/errors.ts";
import type { AppCredentials } from "../upstream/events/client.ts";
import type { UserToken } from "../upstream/events/tokens.ts";
import type { BasicCredentials } from "../upstream/relay/client.ts";
import type { Actor, Directory, SlackProfile } from "./directory.ts";
import { USER_ERROR_CODES, UserFacingError } from "./errors.ts";
import { userText } from "./text.ts";

/**
 * Who may do what, and with which upstream credentials: the checks every action runs before it
 * talks upstream. Each refusal is a UserFacingError.
 */

/**
 * The team's settings. Where the composition root supplies default credentials (the embedded
 * sandbox), missing ones read as those, so the playground and a fresh install work before anyone
 * opens settings.
 */
export async function effectiveSettings(deps: Deps, team: string): Promise<Settings> {
  return withDefaultCredentials(deps, await deps.store.settings.getOrDefault(team));
}

/** Stored settings with the sandbox's default credentials where none are stored. */
export function withDefaultCredentials(
  deps: Pick<Deps, "defaultCredentials">,
  s: Settings,
): Settings {
  const d = deps.defaultCredentials;
  if (!d) return s;
  return {
    ...s,
    eventsAppKey: s.eventsAppKey ?? d.events.clientId,
    eventsAppSecret: s.eventsAppSecret ?? d.events.clientSecret,
    relayUsername: s.relayUsername ?? d.relay.username,
    relayPassword: s.relayPassword ?? d.relay.password,
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

/**
 * True when the user is in the audience: everyone, admins (and owners), or a user group. Guests
 * (single- and multi-channel) are in no audience unless the settings say so (`guestsMay`).
 */
export async function inAudience(
  directory: Directory,
  user: string,
  audience: Audience,
  policy: { guestsMay?: boolean | undefined } = {},
): Promise<boolean> {
  const profile = await directory.profile(user);
  if (profile.isGuest && policy.guestsMay !== true) return false;
  if (audience === "everyone") return true;
  // Admins manage the app; no policy locks them out of it, not even a group lookup that fails.
  if (profile.isAdmin) return true;
  if (audience === "admins") return false;
  try {
    return (await directory.groupMembers(audience.usergroup)).includes(user);
  } catch (err) {
    // The group is gone, or the plan has no user groups: nobody is provably in it.
    if (GROUP_GONE.has(slackErrorName(err) ?? "")) return false;
    throw err;
  }
}

/** usergroups.users.list's documented answers for a group that cannot be read at all. */
const GROUP_GONE = new Set(["no_such_subteam", "plan_upgrade_required"]);

export type PolicyAction = "schedule" | "mint";
const ACTION_WORDS: Readonly<Record<PolicyAction, string>> = {
  schedule: "schedule events",
  mint: "mint relay tokens",
};

/** Throws not_allowed, naming who may, when the policy leaves this user out. */
export async function requireAllowed(
  actor: Actor,
  settings: Settings,
  action: PolicyAction,
): Promise<void> {
  const audience =
    action === "schedule" ? settings.policy.whoMaySchedule : settings.policy.whoMayMint;
  if (await inAudience(actor.directory, actor.user, audience, settings.policy)) return;
  if ((await actor.directory.profile(actor.user)).isGuest && settings.policy.guestsMay !== true) {
    throw new UserFacingError(
      USER_ERROR_CODES.notAllowed,
      `Guests can't ${ACTION_WORDS[action]} in this workspace. Ask a workspace admin if you need to: they can allow guests in \`/onair settings\`.`,
    );
  }
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

export async function requireAdmin(actor: Actor): Promise<SlackProfile> {
  const profile = await actor.directory.profile(actor.user);
  if (!profile.isAdmin) {
    throw new UserFacingError(
      USER_ERROR_CODES.notAllowed,
      "Only workspace admins and owners can change On Air's settings. Ask one of them to run `/onair settings`.",
    );
  }
  return profile;
}

/**
 * Addresses the events service just said it does not know, per workspace, until when: a member
 * who is not registered upstream costs one grant a minute however many commands they run, not
 * one each. `/onair link` (the member saying they were just added) asks again regardless.
 */
const NOT_REGISTERED_MS = 60_000;
const notRegistered = new WeakMap<Deps, Map<string, number>>();

function notRegisteredError(email: string, cause?: unknown): UserFacingError {
  return new UserFacingError(
    USER_ERROR_CODES.notLinked,
    `${userText(email, 200)} is not a registered user of your live events service. Ask your events admin to add you, then run \`/onair link\` again.`,
    cause === undefined ? undefined : { cause },
  );
}

/**
 * Links a Slack user to their events-service account by their Slack e-mail: a user_app grant
 * proves the address is a registered user and yields userId and enterpriseId.
 */
export async function linkUser(
  deps: Deps,
  actor: Actor,
  opts: { askAgain?: boolean } = {},
): Promise<UserLink> {
  const settings = await effectiveSettings(deps, actor.team);
  const creds = eventsCredentials(settings);
  const profile = await actor.directory.profile(actor.user);
  if (!profile.email) {
    throw new UserFacingError(
      USER_ERROR_CODES.notLinked,
      "I can't see an e-mail address on your Slack profile, so I can't find your events account. Ask an admin to check that On Air may read e-mail addresses (users:read.email).",
    );
  }
  let unknown = notRegistered.get(deps);
  if (!unknown) {
    unknown = new Map();
    notRegistered.set(deps, unknown);
  }
  const key = `${actor.team}:${profile.email.toLowerCase()}`;
  if (!opts.askAgain && (unknown.get(key) ?? 0) > deps.now()) {
    throw notRegisteredError(profile.email);
  }
  let token: UserToken;
  try {
    token = await deps.tokens.userToken(actor.team, profile.email, creds);
  } catch (err) {
    if (err instanceof EventsError && (err.status === 404 || err.status === 400)) {
      if (unknown.size >= 10_000) unknown.clear();
      unknown.set(key, deps.now() + NOT_REGISTERED_MS);
      throw notRegisteredError(profile.email, err);
    }
    throw err;
  }
  unknown.delete(key);
  const link: UserLink = {
    email: profile.email,
    userId: token.userId,
    enterpriseId: token.enterpriseId,
    linkedAt: deps.now(),
  };
  await deps.store.users.put(actor.team, actor.user, link);
  return link;
}

/** The user's link; an unlinked user is linked on the fly when their e-mail allows it. */
export async function requireLinked(deps: Deps, actor: Actor): Promise<UserLink> {
  const existing = await deps.store.users.get(actor.team, actor.user);
  if (existing) return existing;
  return linkUser(deps, actor);
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
