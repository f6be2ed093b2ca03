import { SlackApiError } from "../errors.ts";
import { exchange, exchangeLongLived, revoke } from "../oauth.ts";
import { userJson } from "../shapes.ts";
import { page } from "./args.ts";
import type { MethodSpec } from "./types.ts";

/** users.*, usergroups.*, team.info, auth.* and the OAuth exchange. */
export const PEOPLE: Readonly<Record<string, MethodSpec>> = {
  "api.test": {
    auth: false,
    // api.test answers the error it is given (its `error` argument): that is its documented use.
    errors: [],
    handler: (ctx) => {
      const error = ctx.args.str("error");
      if (error !== undefined) throw new SlackApiError(error, { args: ctx.args.raw });
      return { args: ctx.args.raw };
    },
  },

  "auth.test": {
    auth: true,
    errors: [],
    handler: ({ ws, auth }) => {
      const t = auth!;
      const u = ws.user(t.userId);
      return {
        url: `https://${ws.team.domain}.slack.com/`,
        team: ws.team.name,
        user: u?.name ?? t.userId,
        team_id: ws.team.id,
        user_id: t.userId,
        ...(t.kind === "bot" && { bot_id: ws.app.botId }),
        ...(ws.enterprise && { enterprise_id: ws.enterprise.id }),
        ...(t.expiresAt !== undefined && {
          expires_in: Math.max(0, Math.round((t.expiresAt - ws.now()) / 1000)),
        }),
        is_enterprise_install: ws.orgInstall,
      };
    },
  },

  "auth.revoke": {
    auth: true,
    errors: [],
    handler: ({ ws, args, auth }) => {
      if (args.bool("test") !== true) revoke(ws, auth!.token);
      return { revoked: true };
    },
  },

  "oauth.v2.access": {
    auth: false,
    errors: [
      "invalid_client_id",
      "bad_client_secret",
      "invalid_grant_type",
      "invalid_refresh_token",
      "invalid_code",
      "bad_redirect_uri",
    ],
    handler: ({ ws, args, basic }) =>
      exchange(ws, {
        clientId: args.str("client_id") ?? basic?.user,
        clientSecret: args.str("client_secret") ?? basic?.pass,
        grantType: args.str("grant_type"),
        code: args.str("code"),
        redirectUri: args.str("redirect_uri"),
        refreshToken: args.str("refresh_token"),
      }),
  },

  "oauth.v2.exchange": {
    auth: true,
    errors: [
      "bad_client_secret",
      "invalid_client_id",
      "token_already_exchanged",
      "token_rotation_not_enabled",
    ],
    handler: ({ ws, args, basic, auth }) =>
      exchangeLongLived(ws, {
        clientId: args.str("client_id") ?? basic?.user,
        clientSecret: args.str("client_secret") ?? basic?.pass,
        token: auth!,
      }),
  },

  "users.info": {
    auth: true,
    errors: ["user_not_found"],
    handler: ({ ws, args, auth }) => {
      const u = ws.user(args.resolve("user", "user_not_found"));
      if (!u) throw new SlackApiError("user_not_found");
      return { user: userJson(ws, u, auth!.scopes.includes("users:read.email")) };
    },
  },

  "users.lookupByEmail": {
    auth: true,
    errors: ["users_not_found"],
    handler: ({ ws, args }) => {
      const email = args.resolve("email", "users_not_found").toLowerCase();
      for (const u of ws.users.values()) {
        if (!u.deleted && u.email?.toLowerCase() === email) return { user: userJson(ws, u, true) };
      }
      throw new SlackApiError("users_not_found");
    },
  },

  "users.list": {
    auth: true,
    errors: ["invalid_cursor"],
    handler: ({ ws, args, auth }) => {
      const withEmail = auth!.scopes.includes("users:read.email");
      const p = page([...ws.users.values()], args, { defaultLimit: 200 });
      return {
        members: p.items.map((u) => userJson(ws, u, withEmail)),
        cache_ts: ws.nowSec(),
        response_metadata: { next_cursor: p.next },
      };
    },
  },

  "usergroups.list": {
    auth: true,
    errors: [],
    handler: ({ ws, args }) => ({
      usergroups: [...ws.usergroups.values()].map((g) => ({
        id: g.id,
        team_id: ws.team.id,
        is_usergroup: true,
        is_subteam: true,
        name: g.name,
        description: g.description,
        handle: g.handle,
        is_external: false,
        date_create: g.date_create,
        date_update: g.date_create,
        date_delete: 0,
        auto_type: null,
        created_by: ws.installerUserId,
        updated_by: ws.installerUserId,
        deleted_by: null,
        prefs: { channels: [], groups: [] },
        user_count: g.users.length,
        ...(args.bool("include_users") === true && { users: [...g.users] }),
      })),
    }),
  },

  "usergroups.users.list": {
    auth: true,
    errors: ["no_such_subteam"],
    handler: ({ ws, args }) => {
      const g = ws.usergroups.get(args.resolve("usergroup", "no_such_subteam"));
      if (!g) throw new SlackApiError("no_such_subteam");
      return { users: [...g.users] };
    },
  },

  "team.info": {
    auth: true,
    errors: ["team_not_found"],
    handler: ({ ws, args }) => {
      const team = args.str("team");
      if (team !== undefined && team !== ws.team.id) throw new SlackApiError("team_not_found");
      return {
        team: {
          id: ws.team.id,
          name: ws.team.name,
          url: `https://${ws.team.domain}.slack.com/`,
          domain: ws.team.domain,
          email_domain: "example.com",
          icon: { image_default: true, image_34: "", image_44: "", image_68: "" },
          avatar_base_url: "https://ca.slack-edge.example/",
          is_verified: false,
        },
      };
    },
  },
};
