import type { Deps } from "../deps.ts";
import type { Settings } from "../store/index.ts";
import type { AccessToken } from "../upstream/relay/schemas.ts";
import {
  effectiveSettings,
  relayCredentials,
  requireAllowed,
  requireLinked,
  withUserToken,
} from "./access.ts";
import { actorName, audit } from "./audit.ts";
import type { Actor } from "./directory.ts";
import { USER_ERROR_CODES, UserFacingError } from "./errors.ts";
import { slackDate, userText } from "./text.ts";

export const DAY_MS = 24 * 60 * 60 * 1000;
export const TWO_WEEKS_MS = 14 * DAY_MS;
/** The relay gives a token minted with a zero-touch pairing code one day, whatever is asked. */
export const PAIRING_TOKEN_MS = DAY_MS;
/**
 * "Never expires" is offered only when the policy's longest token is at least this long: the
 * settings hold one number (longestTokenMs), and a ceiling of a century or more reads as "no
 * ceiling" (Number.MAX_SAFE_INTEGER is the natural way to store it).
 */
export const NEVER_ALLOWED_MS = 100 * 365 * DAY_MS;

export type DurationChoice = "day" | "twoWeeks" | "custom" | "never";

export function allowedDurations(longestMs: number): DurationChoice[] {
  const out: DurationChoice[] = [];
  if (longestMs >= DAY_MS) out.push("day");
  if (longestMs >= TWO_WEEKS_MS) out.push("twoWeeks");
  out.push("custom");
  if (longestMs >= NEVER_ALLOWED_MS) out.push("never");
  return out;
}

export function durationWords(ms: number): string {
  if (ms % DAY_MS === 0) return ms === DAY_MS ? "1 day" : `${ms / DAY_MS} days`;
  const h = ms / 3_600_000;
  return Number.isInteger(h)
    ? h === 1
      ? "1 hour"
      : `${h} hours`
    : `${Math.round(ms / 60000)} minutes`;
}

/** What the token form asks for, as read from it. */
export interface TokenDraft {
  roles: string[];
  duration: DurationChoice | undefined;
  /** Typed in the custom field, as typed. */
  customHours: string | undefined;
  clientName: string | undefined;
  pairingCode: string | undefined;
}

export interface TokenRequest {
  roles: string[];
  /** Validity sent to the relay: undefined = its default (2 weeks), -1 = never. */
  durationMs: number | undefined;
  clientName?: string;
  pairingCode?: string;
}

export type TokenDraftErrors = Partial<
  Record<"roles" | "duration" | "customHours" | "pairingCode" | "clientName", string>
>;

/**
 * Checks a token request against the workspace's longest-token policy, on every path that yields
 * a token: a pairing code too (the relay makes that token last a day, whatever is asked, so a
 * policy shorter than a day refuses it).
 */
export function checkTokenDraft(
  draft: TokenDraft,
  settings: Pick<Settings, "longestTokenMs">,
  validRoles: readonly string[],
): { errors: TokenDraftErrors } | { request: TokenRequest } {
  const errors: TokenDraftErrors = {};
  const longest = settings.longestTokenMs;
  const roles = draft.roles.filter((r) => validRoles.includes(r));
  if (roles.length === 0) errors.roles = "Pick at least one role.";
  const allowed = allowedDurations(longest);
  let durationMs: number | undefined;
  if (draft.pairingCode) {
    if (PAIRING_TOKEN_MS > longest) {
      errors.pairingCode = `A token paired with a code lasts 1 day, longer than this workspace allows (${durationWords(longest)}). Leave the code empty, or ask an admin to allow longer tokens.`;
    }
  } else if (!draft.duration || !allowed.includes(draft.duration)) {
    errors.duration = `Pick how long the token is valid; the longest allowed is ${durationWords(longest)}.`;
  } else if (draft.duration === "day") durationMs = DAY_MS;
  else if (draft.duration === "twoWeeks") durationMs = undefined;
  else if (draft.duration === "never") durationMs = -1;
  else {
    const raw = draft.customHours?.trim();
    const hours = raw ? Number(raw) : Number.NaN;
    if (!raw) errors.customHours = "Say how many hours the token is valid.";
    else if (!Number.isInteger(hours) || hours < 1)
      errors.customHours = "Use a whole number of hours, 1 or more.";
    else if (hours * 3_600_000 > longest) {
      errors.customHours = `That is longer than this workspace allows (${durationWords(longest)}). Pick fewer hours.`;
    } else durationMs = hours * 3_600_000;
  }
  if (Object.keys(errors).length > 0) return { errors };
  return {
    request: {
      roles,
      durationMs,
      ...(draft.clientName ? { clientName: draft.clientName } : {}),
      ...(draft.pairingCode ? { pairingCode: draft.pairingCode } : {}),
    },
  };
}

/** The token form may open for this actor; returns the policy it shows. */
export async function startMinting(deps: Deps, actor: Actor): Promise<Settings> {
  const settings = await effectiveSettings(deps, actor.team);
  await requireAllowed(actor, settings, "mint");
  relayCredentials(settings);
  return settings;
}

/**
 * Mints a relay token. The token itself goes back to the caller, who shows it once to the
 * requester; it never reaches the audit record or a log line.
 */
export async function mintToken(
  deps: Deps,
  actor: Actor,
  draft: TokenDraft,
  validRoles: readonly string[],
): Promise<AccessToken> {
  const settings = await effectiveSettings(deps, actor.team);
  await requireAllowed(actor, settings, "mint");
  const checked = checkTokenDraft(draft, settings, validRoles);
  if ("errors" in checked) {
    throw new UserFacingError(
      USER_ERROR_CODES.invalid,
      Object.values(checked.errors)[0] ?? "That token request is not allowed.",
    );
  }
  const { request } = checked;
  let token: AccessToken;
  if (request.pairingCode) {
    // Zero-touch pairing needs the user's own events token as meetingaccesstoken.
    const link = await requireLinked(deps, actor);
    token = await withUserToken(deps, actor.team, link, (t) =>
      deps.relay.createAccessToken(
        { meetingAccessToken: t.accessToken },
        {
          roles: request.roles,
          code: request.pairingCode ?? "",
          ...(request.clientName ? { clientName: request.clientName } : {}),
        },
      ),
    );
  } else {
    token = await deps.relay.createAccessToken(
      { basic: relayCredentials(settings) },
      {
        roles: request.roles,
        ...(request.durationMs !== undefined ? { durationMs: request.durationMs } : {}),
        ...(request.clientName ? { clientName: request.clientName } : {}),
      },
    );
  }
  const expiry = token.expirationDate === null ? "never" : slackDate(token.expirationDate);
  await audit(
    deps,
    actor.team,
    {
      actor: actor.user,
      action: "token.mint",
      details: {
        clientName: token.clientName ?? null,
        roles: token.roles.join(","),
        expiresAt: token.expirationDate,
        pairing: Boolean(request.pairingCode),
      },
    },
    `${await actorName(actor)} minted a relay token for ${token.clientName ? `“${userText(token.clientName, 100)}”` : "an unnamed client"} (roles ${userText(token.roles.join(", "), 200)}; expires ${expiry}).`,
  );
  return token;
}

/** The enterprise's live tokens (for those who may mint). */
export async function listTokens(deps: Deps, actor: Actor): Promise<AccessToken[]> {
  const settings = await effectiveSettings(deps, actor.team);
  await requireAllowed(actor, settings, "mint");
  return deps.relay.listAccessTokens(relayCredentials(settings));
}
