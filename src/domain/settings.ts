import type { Deps } from "../deps.ts";
import type { Settings } from "../store/index.ts";
import { effectiveSettings, requireAdmin } from "./access.ts";
import { actorName } from "./audit.ts";
import type { Actor } from "./directory.ts";
import { userMessageOf } from "./errors.ts";

/** How the audit channel names a changed setting: as the settings form labels it (never a value). */
const CHANGE_LABELS: Record<string, string> = {
  eventsAppKey: "events app key",
  eventsAppSecret: "events app secret",
  relayUsername: "relay username",
  relayPassword: "relay password",
  auditChannel: "audit channel",
  longestTokenMs: "longest relay token allowed",
  "policy.whoMaySchedule": "who may schedule events",
  "policy.whoMayMint": "who may mint relay tokens",
  "policy.guestsMay": "whether guests may schedule and mint",
  privacy: "attendee e-mail addresses in live threads",
};

function changeLabel(field: string): string {
  return CHANGE_LABELS[field] ?? "another setting";
}

/** Relay token minted by Check: short-lived, named so an admin recognises it in the token list. */
export const CHECK_TOKEN_MS = 60_000;
export const CHECK_CLIENT_NAME = "On Air check";

/** The settings an admin edits (admins only), with the sandbox's defaults filled in. */
export async function startSettings(deps: Deps, actor: Actor): Promise<Settings> {
  const [, settings] = await Promise.all([
    requireAdmin(actor),
    effectiveSettings(deps, actor.team),
  ]);
  return settings;
}

/**
 * Stores the settings (admins only), drops every cached upstream token of the team (they were
 * granted with the old credentials), and writes an audit record naming the changed fields, never
 * their values; a line in the audit channel says the same.
 */
export async function saveSettings(
  deps: Deps,
  actor: Actor,
  settings: Settings,
  changed: readonly string[],
): Promise<void> {
  await requireAdmin(actor);
  const { team, user } = actor;
  const next: Settings = { ...settings, updatedAt: deps.now(), updatedBy: user };
  await deps.store.settings.put(team, next);
  await deps.tokens.invalidateEnterprise(team);
  const links = await deps.store.users.list(team);
  await Promise.all(links.map((l) => deps.tokens.invalidateUser(team, l.link.email)));
  await deps.store.audit.append(team, {
    actor: user,
    action: "settings.update",
    details: { fields: changed.join(",") || "none" },
    at: deps.now(),
  });
  if (!next.auditChannel || changed.length === 0) return;
  void deps.live.announce(
    team,
    next.auditChannel,
    `${await actorName(actor)} changed On Air's settings: ${changed.map(changeLabel).join(", ")}.`,
  );
}

export interface CheckCredentials {
  relayUsername?: string | undefined;
  relayPassword?: string | undefined;
  eventsAppKey?: string | undefined;
  eventsAppSecret?: string | undefined;
}

export interface CheckLine {
  ok: boolean;
  service: string;
  detail: string;
  /** Which credentials the line is about; absent when there were none to check. */
  id?: "relay" | "events";
}

/**
 * Runs the upstream checks with the credentials typed in the modal, or the stored ones where a
 * field is empty: a short relay token and the enterprise self lookup, and an enterprise_app
 * grant. Nothing is cached: the values may not be saved yet. Admins only.
 */
export async function checkCredentials(
  deps: Deps,
  actor: Actor,
  typed: CheckCredentials,
): Promise<CheckLine[]> {
  await requireAdmin(actor);
  const stored = await effectiveSettings(deps, actor.team);
  const username = typed.relayUsername ?? stored.relayUsername;
  const password = typed.relayPassword ?? stored.relayPassword;
  const key = typed.eventsAppKey ?? stored.eventsAppKey;
  const secret = typed.eventsAppSecret ?? stored.eventsAppSecret;

  const relay = async (): Promise<CheckLine> => {
    const service = "Relay";
    if (!username || !password) {
      return { ok: false, service, detail: "no username and password yet." };
    }
    try {
      const token = await deps.relay.createAccessToken(
        { basic: { username, password } },
        { durationMs: CHECK_TOKEN_MS, clientName: CHECK_CLIENT_NAME },
      );
      const self = await deps.relay.getEnterpriseSelf(token.accessToken);
      return {
        ok: true,
        service,
        id: "relay",
        detail: `${self.label} (${self.name}), point of contact ${self.pointOfContact}.`,
      };
    } catch (err) {
      deps.logger.info({ err }, "settings check: relay failed");
      return { ok: false, service, id: "relay", detail: userMessageOf(err) };
    }
  };
  const events = async (): Promise<CheckLine> => {
    const service = "Events service";
    if (!key || !secret) return { ok: false, service, detail: "no app key and secret yet." };
    try {
      const grant = await deps.events.grantEnterpriseApp({ clientId: key, clientSecret: secret });
      return {
        ok: true,
        service,
        id: "events",
        detail: `the app key works; enterprise token granted (enterprise ${grant.enterpriseId}).`,
      };
    } catch (err) {
      deps.logger.info({ err }, "settings check: events failed");
      return { ok: false, service, id: "events", detail: userMessageOf(err) };
    }
  };
  return Promise.all([relay(), events()]);
}
