import { SlackApiError } from "./errors.ts";
import { randomHex } from "./ids.ts";
import { AUTH_CODE_TTL_MS, type Json, type TokenRecord } from "./model.ts";
import type { Workspace } from "./workspace.ts";

/** Tokens and the OAuth install: authorize, exchange (code and refresh grants), revoke. */

/** The token's record, or Slack's error: not_authed, invalid_auth, token_revoked, token_expired. */
export function authenticate(ws: Workspace, token: string | undefined): TokenRecord {
  if (token === undefined || token === "") throw new SlackApiError("not_authed");
  const rec = ws.tokens.get(token);
  if (!rec) throw new SlackApiError("invalid_auth");
  if (rec.revoked) throw new SlackApiError("token_revoked");
  if (rec.expiresAt !== undefined && ws.now() >= rec.expiresAt) {
    throw new SlackApiError("token_expired");
  }
  return rec;
}

export function revoke(ws: Workspace, token: string): void {
  const rec = ws.tokens.get(token);
  if (rec) rec.revoked = true;
}

/** The app is removed from the workspace: every token it holds stops working. */
export function uninstall(ws: Workspace): { bot: string[]; oauth: string[] } {
  const bot = new Set<string>();
  const oauth = new Set<string>();
  for (const rec of ws.tokens.values()) {
    if (rec.revoked) continue;
    rec.revoked = true;
    (rec.kind === "bot" ? bot : oauth).add(rec.userId);
  }
  return { bot: [...bot], oauth: [...oauth] };
}

/** GET /oauth/v2/authorize, approved at once by `user` (default: the installer). */
export function authorize(
  ws: Workspace,
  q: {
    clientId: string | undefined;
    scopes: readonly string[];
    userScopes: readonly string[];
    redirectUri: string | undefined;
    user?: string | undefined;
  },
): string {
  if (q.clientId !== ws.app.clientId) throw new SlackApiError("invalid_client_id");
  const user = q.user ?? ws.installerUserId;
  if (!ws.users.has(user)) throw new SlackApiError("user_not_found");
  const code = `${ws.team.id.replace(/\D/g, "") || "1"}.${randomHex(16)}`;
  ws.authCodes.set(code, {
    user,
    scopes: q.scopes,
    userScopes: q.userScopes,
    redirectUri: q.redirectUri,
    createdAt: ws.now(),
    used: false,
  });
  return code;
}

function checkClient(
  ws: Workspace,
  clientId: string | undefined,
  clientSecret: string | undefined,
): void {
  if (clientId !== ws.app.clientId) throw new SlackApiError("invalid_client_id");
  if (clientSecret !== ws.app.clientSecret) throw new SlackApiError("bad_client_secret");
}

function issue(ws: Workspace, kind: "bot" | "user", userId: string, scopes: readonly string[]) {
  const rotation = ws.tokenRotation;
  const base = ws.newToken(kind === "bot" ? "xoxb" : "xoxp");
  const token = rotation ? `xoxe.${base}` : base;
  const refreshToken = rotation ? `xoxe-1-${randomHex(24)}` : undefined;
  const rec: TokenRecord = {
    token,
    kind,
    userId,
    scopes: [...scopes],
    expiresAt: rotation ? ws.now() + rotation.expiresInSec * 1000 : undefined,
    refreshToken,
    revoked: false,
  };
  ws.tokens.set(token, rec);
  if (refreshToken !== undefined) ws.refreshTokens.set(refreshToken, { userId, kind });
  return rec;
}

function rotationFields(ws: Workspace, rec: TokenRecord): Json {
  if (rec.refreshToken === undefined || rec.expiresAt === undefined) return {};
  return {
    refresh_token: rec.refreshToken,
    expires_in: Math.round((rec.expiresAt - ws.now()) / 1000),
  };
}

/** Who the installation is for: the workspace, or the org for an org-wide install. */
function installedFor(ws: Workspace): Json {
  if (ws.orgInstall && ws.enterprise) {
    return {
      team: null,
      enterprise: { id: ws.enterprise.id, name: ws.enterprise.name },
      is_enterprise_install: true,
    };
  }
  return {
    team: { id: ws.team.id, name: ws.team.name },
    enterprise: null,
    is_enterprise_install: false,
  };
}

/**
 * A new expiring token for a refresh token or an exchanged long-lived one. Each refresh returns
 * a new refresh token and the one presented is spent (a second refresh with it answers
 * invalid_refresh_token: two instances refreshing at once fork the token, node-slack-sdk#2504).
 * The access token it replaces keeps working until its own expiry.
 */
function rotated(ws: Workspace, kind: "bot" | "user", userId: string, scopes: readonly string[]) {
  const rotation = ws.tokenRotation ?? { expiresInSec: 43_200 };
  const token = `xoxe.${ws.newToken(kind === "bot" ? "xoxb" : "xoxp")}`;
  const refreshToken = `xoxe-1-${randomHex(24)}`;
  const rec: TokenRecord = {
    token,
    kind,
    userId,
    scopes: [...scopes],
    expiresAt: ws.now() + rotation.expiresInSec * 1000,
    refreshToken,
    revoked: false,
  };
  ws.tokens.set(token, rec);
  ws.refreshTokens.set(refreshToken, { userId, kind });
  ws.refreshCount++;
  return {
    app_id: ws.app.appId,
    scope: scopes.join(","),
    token_type: kind,
    access_token: token,
    ...rotationFields(ws, rec),
    ...(kind === "bot" ? { bot_user_id: ws.app.botUserId } : { user_id: userId }),
    ...installedFor(ws),
  };
}

/** oauth.v2.exchange: a long-lived token becomes an expiring one with a refresh token. */
export function exchangeLongLived(
  ws: Workspace,
  a: { clientId: string | undefined; clientSecret: string | undefined; token: TokenRecord },
): Json {
  checkClient(ws, a.clientId, a.clientSecret);
  if (!ws.tokenRotation) throw new SlackApiError("token_rotation_not_enabled");
  if (a.token.refreshToken !== undefined || a.token.expiresAt !== undefined) {
    throw new SlackApiError("token_already_exchanged");
  }
  if (ws.exchanged.has(a.token.token)) throw new SlackApiError("token_already_exchanged");
  ws.exchanged.add(a.token.token);
  return rotated(ws, a.token.kind, a.token.userId, a.token.scopes);
}

/** oauth.v2.access, both grants: authorization_code (the install) and refresh_token. */
export function exchange(
  ws: Workspace,
  a: {
    clientId: string | undefined;
    clientSecret: string | undefined;
    grantType: string | undefined;
    code: string | undefined;
    redirectUri: string | undefined;
    refreshToken: string | undefined;
  },
): Json {
  checkClient(ws, a.clientId, a.clientSecret);
  const grant = a.grantType ?? "authorization_code";
  if (grant === "refresh_token") {
    const r = a.refreshToken === undefined ? undefined : ws.refreshTokens.get(a.refreshToken);
    if (!r || ws.refusedRefresh) throw new SlackApiError("invalid_refresh_token");
    ws.refreshTokens.delete(a.refreshToken as string);
    const old = [...ws.tokens.values()].find((t) => t.refreshToken === a.refreshToken);
    return rotated(ws, r.kind, r.userId, old?.scopes ?? []);
  }
  if (grant !== "authorization_code") throw new SlackApiError("invalid_grant_type");
  const c = a.code === undefined ? undefined : ws.authCodes.get(a.code);
  if (!c || ws.now() - c.createdAt > AUTH_CODE_TTL_MS) throw new SlackApiError("invalid_code");
  // A spent code is no longer a valid one (the reference has no code_already_used).
  if (c.used) throw new SlackApiError("invalid_code");
  if (
    c.redirectUri !== undefined &&
    a.redirectUri !== undefined &&
    a.redirectUri !== c.redirectUri
  ) {
    throw new SlackApiError("bad_redirect_uri");
  }
  c.used = true;
  const authedUser: Json = { id: c.user };
  if (c.userScopes.length > 0) {
    const u = issue(ws, "user", c.user, c.userScopes);
    Object.assign(authedUser, {
      scope: c.userScopes.join(","),
      access_token: u.token,
      token_type: "user",
      ...rotationFields(ws, u),
    });
  }
  const out: Json = { app_id: ws.app.appId, authed_user: authedUser, ...installedFor(ws) };
  if (c.scopes.length > 0) {
    const bot = issue(ws, "bot", ws.app.botUserId, c.scopes);
    Object.assign(out, {
      scope: c.scopes.join(","),
      token_type: "bot",
      access_token: bot.token,
      bot_user_id: ws.app.botUserId,
      ...rotationFields(ws, bot),
    });
  }
  // Installing adds the bot user back to the workspace if an uninstall had removed it.
  const botUser = ws.users.get(ws.app.botUserId);
  if (botUser) botUser.deleted = false;
  return out;
}
