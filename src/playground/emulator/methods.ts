import { argumentError, SlackApiError } from "./errors.ts";
import { parseTs } from "./ids.ts";
import type { Channel, Json, Message, TokenRecord, Workspace } from "./workspace.ts";

/**
 * The Web API methods the app may call, each as Slack answers it. A handler gets parsed
 * arguments and the caller's token record and returns the body without `ok`; failures are
 * thrown as SlackApiError with Slack's error names.
 */

export class Args {
  constructor(readonly raw: Readonly<Record<string, unknown>>) {}

  has(name: string): boolean {
    const v = this.raw[name];
    return v !== undefined && v !== null && v !== "";
  }

  str(name: string): string | undefined {
    const v = this.raw[name];
    if (typeof v === "string") return v === "" ? undefined : v;
    if (typeof v === "number" || typeof v === "boolean") return String(v);
    return undefined;
  }

  required(name: string, code = "invalid_arguments"): string {
    const v = this.str(name);
    if (v === undefined) {
      throw code === "invalid_arguments"
        ? argumentError(code, [`[ERROR] missing required field: ${name}`])
        : new SlackApiError(code);
    }
    return v;
  }

  num(name: string): number | undefined {
    const v = this.raw[name];
    if (v === undefined || v === null || v === "") return undefined;
    const n = typeof v === "number" ? v : Number(v);
    if (!Number.isFinite(n)) {
      throw argumentError("invalid_arguments", [`[ERROR] ${name} must be a number`]);
    }
    return n;
  }

  bool(name: string): boolean | undefined {
    const v = this.raw[name];
    if (v === undefined || v === null || v === "") return undefined;
    return v === true || v === "true" || v === "1" || v === 1;
  }

  /** A JSON argument: form bodies carry it as a string, JSON bodies as the value itself. */
  json(name: string, badFormat: string): unknown {
    const v = this.raw[name];
    if (v === undefined || v === null || v === "") return undefined;
    if (typeof v !== "string") return v;
    try {
      return JSON.parse(v);
    } catch {
      throw new SlackApiError(badFormat);
    }
  }

  list(name: string, badFormat: string): unknown[] | undefined {
    const v = this.json(name, badFormat);
    if (v === undefined) return undefined;
    if (!Array.isArray(v)) throw new SlackApiError(badFormat);
    return v;
  }

  csv(name: string): string[] {
    const v = this.str(name);
    return v === undefined
      ? []
      : v
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean);
  }
}

export interface CallContext {
  readonly ws: Workspace;
  readonly args: Args;
  /** undefined only for methods that take no token (oauth.v2.access, api.test) */
  readonly auth: TokenRecord | undefined;
  /** the HTTP Basic pair, when the client sent its credentials that way */
  readonly basic: { user: string; pass: string } | undefined;
}

export interface MethodSpec {
  /** false: no token needed (OAuth exchange) */
  readonly auth: boolean;
  /** any one of these scopes will do; none listed: no scope needed */
  readonly scopes?: readonly string[];
  readonly handler: (ctx: CallContext) => Json;
}

function actor(ctx: CallContext): TokenRecord {
  if (!ctx.auth) throw new SlackApiError("not_authed");
  return ctx.auth;
}

function content(a: Args) {
  return {
    text: a.str("text"),
    blocks: a.list("blocks", "invalid_blocks_format"),
    attachments: a.list("attachments", "invalid_attachments"),
  };
}

function channelArg(ctx: CallContext, name = "channel"): string {
  return ctx.args.required(name, "channel_not_found");
}

/** Slack's cursor pagination: an opaque next_cursor, "" on the last page. */
function page<T>(items: readonly T[], a: Args, defaultLimit = 100): { items: T[]; next: string } {
  const limit = Math.min(a.num("limit") || defaultLimit, 1000);
  let offset = 0;
  const cursor = a.str("cursor");
  if (cursor !== undefined) {
    const m = /^offset:(\d+)$/.exec(Buffer.from(cursor, "base64").toString("utf8"));
    if (!m) throw new SlackApiError("invalid_cursor");
    offset = Number(m[1]);
  }
  const slice = items.slice(offset, offset + limit);
  const nextOffset = offset + slice.length;
  const next =
    nextOffset < items.length ? Buffer.from(`offset:${nextOffset}`).toString("base64") : "";
  return { items: slice, next };
}

function readable(ctx: CallContext): Channel {
  return ctx.ws.visibleChannel(channelArg(ctx), actor(ctx).userId);
}

/** A Slack ts argument ("1700000000", "1700000000.5", "1700000000.000100") in microseconds. */
function tsArg(a: Args, name: "oldest" | "latest"): number | undefined {
  const v = a.str(name);
  if (v === undefined) return undefined;
  const m = /^(\d{1,12})(?:\.(\d{0,6}))?$/.exec(v);
  if (!m) throw new SlackApiError(`invalid_ts_${name}`);
  return Number(m[1]) * 1_000_000 + Number((m[2] ?? "").padEnd(6, "0"));
}

/**
 * conversations.history / .replies time range: only messages strictly after `oldest` and
 * before `latest` (default: now); `inclusive` keeps the bounds themselves.
 */
function timeRange(a: Args): (m: Message) => boolean {
  const oldest = tsArg(a, "oldest");
  const latest = tsArg(a, "latest");
  const inclusive = a.bool("inclusive") === true;
  return (m) => {
    const at = parseTs(m.ts) ?? 0;
    if (oldest !== undefined && (inclusive ? at < oldest : at <= oldest)) return false;
    if (latest !== undefined && (inclusive ? at > latest : at >= latest)) return false;
    return true;
  };
}

/** A message as the read methods list it: metadata only when asked with include_all_metadata. */
function listedMessage(ctx: CallContext, m: Message): Json {
  const out = ctx.ws.messageJson(m);
  if (ctx.args.bool("include_all_metadata") !== true) delete out.metadata;
  return out;
}

const CONV_READ = ["channels:read", "groups:read", "im:read", "mpim:read"] as const;
const CONV_HISTORY = ["channels:history", "groups:history", "im:history", "mpim:history"] as const;

export const METHODS: Readonly<Record<string, MethodSpec>> = {
  "api.test": { auth: false, handler: (ctx) => ({ args: ctx.args.raw }) },

  "auth.test": {
    auth: true,
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
        is_enterprise_install: false,
      };
    },
  },

  "auth.revoke": {
    auth: true,
    handler: ({ ws, args, auth }) => {
      if (args.bool("test") !== true) ws.revoke(auth!.token);
      return { revoked: true };
    },
  },

  "oauth.v2.access": {
    auth: false,
    handler: ({ ws, args, basic }) =>
      ws.exchange({
        clientId: args.str("client_id") ?? basic?.user,
        clientSecret: args.str("client_secret") ?? basic?.pass,
        grantType: args.str("grant_type"),
        code: args.str("code"),
        redirectUri: args.str("redirect_uri"),
        refreshToken: args.str("refresh_token"),
      }),
  },

  "chat.postMessage": {
    auth: true,
    scopes: ["chat:write"],
    handler: (ctx) => {
      const t = actor(ctx);
      const ch = ctx.ws.postableChannel(channelArg(ctx), t.userId, t.scopes);
      const msg = ctx.ws.postMessage(ch, t.userId, {
        ...content(ctx.args),
        thread_ts: ctx.args.str("thread_ts"),
        reply_broadcast: ctx.args.bool("reply_broadcast"),
        metadata: ctx.args.json("metadata", "invalid_metadata_format"),
      });
      return { channel: ch.id, ts: msg.ts, message: ctx.ws.messageJson(msg) };
    },
  },

  "chat.update": {
    auth: true,
    scopes: ["chat:write"],
    handler: (ctx) => {
      const t = actor(ctx);
      const ch = readable(ctx);
      const ts = ctx.args.required("ts", "message_not_found");
      const msg = ctx.ws.updateMessage(ch, ts, t.userId, {
        ...content(ctx.args),
        metadata: ctx.args.json("metadata", "invalid_metadata_format"),
      });
      return { channel: ch.id, ts: msg.ts, text: msg.text, message: ctx.ws.messageJson(msg) };
    },
  },

  "chat.delete": {
    auth: true,
    scopes: ["chat:write"],
    handler: (ctx) => {
      const t = actor(ctx);
      const ch = readable(ctx);
      const ts = ctx.args.required("ts", "message_not_found");
      ctx.ws.deleteMessage(ch, ts, t.userId);
      return { channel: ch.id, ts };
    },
  },

  "chat.postEphemeral": {
    auth: true,
    scopes: ["chat:write"],
    handler: (ctx) => {
      const t = actor(ctx);
      const ch = ctx.ws.postableChannel(channelArg(ctx), t.userId, t.scopes);
      const user = ctx.args.required("user", "user_not_found");
      const e = ctx.ws.postEphemeral(
        ch,
        user,
        { ...content(ctx.args), thread_ts: ctx.args.str("thread_ts") },
        "chat.postEphemeral",
      );
      return { message_ts: e.ts };
    },
  },

  "chat.scheduleMessage": {
    auth: true,
    scopes: ["chat:write"],
    handler: (ctx) => {
      const t = actor(ctx);
      const ch = ctx.ws.postableChannel(channelArg(ctx), t.userId, t.scopes);
      const postAt = ctx.args.num("post_at");
      if (postAt === undefined) throw new SlackApiError("invalid_time");
      const s = ctx.ws.scheduleMessage(ch, t.userId, postAt, {
        ...content(ctx.args),
        thread_ts: ctx.args.str("thread_ts"),
      });
      return {
        channel: ch.id,
        scheduled_message_id: s.id,
        post_at: s.post_at,
        message: {
          type: "message",
          text: s.text,
          user: t.userId,
          bot_id: ctx.ws.app.botId,
          team: ctx.ws.team.id,
          ...(s.blocks !== undefined && { blocks: s.blocks }),
        },
      };
    },
  },

  "chat.deleteScheduledMessage": {
    auth: true,
    scopes: ["chat:write"],
    handler: (ctx) => {
      const ch = readable(ctx);
      ctx.ws.deleteScheduled(
        ch,
        ctx.args.required("scheduled_message_id", "invalid_scheduled_message_id"),
      );
      return {};
    },
  },

  "chat.scheduledMessages.list": {
    auth: true,
    scopes: ["chat:write"],
    handler: (ctx) => {
      const t = actor(ctx);
      const a = ctx.args;
      const channel = a.has("channel")
        ? ctx.ws.visibleChannel(a.required("channel"), t.userId).id
        : undefined;
      const latest = a.num("latest");
      const oldest = a.num("oldest");
      const all = [...ctx.ws.scheduled.values()]
        .filter(
          (s) =>
            (channel === undefined || s.channel === channel) &&
            (latest === undefined || s.post_at <= latest) &&
            (oldest === undefined || s.post_at >= oldest),
        )
        .sort((x, y) => x.post_at - y.post_at);
      const p = page(all, a);
      return {
        scheduled_messages: p.items.map((s) => ({
          id: s.id,
          channel_id: s.channel,
          post_at: s.post_at,
          date_created: s.date_created,
          text: s.text,
        })),
        response_metadata: { next_cursor: p.next },
      };
    },
  },

  "chat.getPermalink": {
    auth: true,
    handler: (ctx) => {
      const ch = readable(ctx);
      const ts = ctx.args.required("message_ts", "message_not_found");
      if (!ctx.ws.findMessage(ch, ts)) throw new SlackApiError("message_not_found");
      return { channel: ch.id, permalink: ctx.ws.permalink(ch, ts) };
    },
  },

  "views.open": {
    auth: true,
    handler: ({ ws, args }) => {
      const trigger = args.str("trigger_id") ?? args.str("interactivity_pointer");
      if (trigger === undefined) {
        throw argumentError("invalid_arguments", ["[ERROR] missing required field: trigger_id"]);
      }
      const view = args.json("view", "invalid_arguments");
      return { view: ws.viewJson(ws.openView(trigger, view)) };
    },
  },

  "views.push": {
    auth: true,
    handler: ({ ws, args }) => {
      const trigger = args.str("trigger_id") ?? args.str("interactivity_pointer");
      if (trigger === undefined) {
        throw argumentError("invalid_arguments", ["[ERROR] missing required field: trigger_id"]);
      }
      const view = args.json("view", "invalid_arguments");
      return { view: ws.viewJson(ws.pushView(trigger, view)) };
    },
  },

  "views.update": {
    auth: true,
    handler: ({ ws, args }) => {
      const view = args.json("view", "invalid_arguments");
      const viewId = args.str("view_id");
      const externalId = args.str("external_id");
      const ref = {
        ...(viewId !== undefined && { view_id: viewId }),
        ...(externalId !== undefined && { external_id: externalId }),
      };
      return { view: ws.viewJson(ws.updateView(ref, view, args.str("hash"))) };
    },
  },

  "views.publish": {
    auth: true,
    handler: ({ ws, args }) => {
      const user = args.required("user_id");
      const view = args.json("view", "invalid_arguments");
      return { view: ws.viewJson(ws.publishView(user, view, args.str("hash"))) };
    },
  },

  "users.info": {
    auth: true,
    scopes: ["users:read"],
    handler: ({ ws, args, auth }) => {
      const u = ws.user(args.required("user", "user_not_found"));
      if (!u) throw new SlackApiError("user_not_found");
      return { user: ws.userJson(u, auth!.scopes.includes("users:read.email")) };
    },
  },

  "users.lookupByEmail": {
    auth: true,
    scopes: ["users:read.email"],
    handler: ({ ws, args }) => {
      const email = args.required("email", "users_not_found").toLowerCase();
      for (const u of ws.users.values()) {
        if (!u.deleted && u.email?.toLowerCase() === email) return { user: ws.userJson(u, true) };
      }
      throw new SlackApiError("users_not_found");
    },
  },

  "users.list": {
    auth: true,
    scopes: ["users:read"],
    handler: ({ ws, args, auth }) => {
      const withEmail = auth!.scopes.includes("users:read.email");
      const p = page([...ws.users.values()], args, 200);
      return {
        members: p.items.map((u) => ws.userJson(u, withEmail)),
        cache_ts: ws.nowSec(),
        response_metadata: { next_cursor: p.next },
      };
    },
  },

  "conversations.info": {
    auth: true,
    scopes: CONV_READ,
    handler: (ctx) => ({
      channel: ctx.ws.channelJson(
        readable(ctx),
        actor(ctx).userId,
        ctx.args.bool("include_num_members") === true,
      ),
    }),
  },

  "conversations.list": {
    auth: true,
    scopes: CONV_READ,
    handler: (ctx) => {
      const t = actor(ctx);
      const types = new Set(ctx.args.csv("types"));
      if (types.size === 0) types.add("public_channel");
      const excludeArchived = ctx.args.bool("exclude_archived") === true;
      const all = [...ctx.ws.channels.values()].filter((c) => {
        if (excludeArchived && c.is_archived) return false;
        if (c.is_im) return types.has("im") && c.members.has(t.userId);
        if (c.is_private) return types.has("private_channel") && c.members.has(t.userId);
        return types.has("public_channel");
      });
      const p = page(all, ctx.args);
      return {
        channels: p.items.map((c) => ctx.ws.channelJson(c, t.userId, true)),
        response_metadata: { next_cursor: p.next },
      };
    },
  },

  "conversations.members": {
    auth: true,
    scopes: CONV_READ,
    handler: (ctx) => {
      const ch = readable(ctx);
      const p = page([...ch.members], ctx.args);
      return { members: p.items, response_metadata: { next_cursor: p.next } };
    },
  },

  "conversations.join": {
    auth: true,
    scopes: ["channels:join"],
    handler: (ctx) => {
      const t = actor(ctx);
      const ch = ctx.ws.visibleChannel(channelArg(ctx), t.userId);
      if (ch.is_private || ch.is_im)
        throw new SlackApiError("method_not_supported_for_channel_type");
      if (ch.is_archived) throw new SlackApiError("is_archived");
      const already = ch.members.has(t.userId);
      ch.members.add(t.userId);
      return {
        channel: ctx.ws.channelJson(ch, t.userId),
        ...(already && {
          warning: "already_in_channel",
          response_metadata: { warnings: ["already_in_channel"] },
        }),
      };
    },
  },

  "conversations.open": {
    auth: true,
    scopes: ["im:write"],
    handler: (ctx) => {
      const users = ctx.args.csv("users");
      const existing = ctx.args.str("channel");
      if (existing !== undefined) return { channel: { id: readable(ctx).id } };
      const [user, ...more] = users;
      if (user === undefined) throw new SlackApiError("users_list_not_supplied");
      if (more.length > 0) throw new SlackApiError("not_supported");
      if (!ctx.ws.user(user)) throw new SlackApiError("user_not_found");
      return { channel: { id: ctx.ws.dmWith(user).id } };
    },
  },

  "conversations.history": {
    auth: true,
    scopes: CONV_HISTORY,
    handler: (ctx) => {
      const ch = readable(ctx);
      if (!ch.members.has(actor(ctx).userId)) throw new SlackApiError("not_in_channel");
      const within = timeRange(ctx.args);
      const newestFirst = ctx.ws.topLevel(ch.id).filter(within).reverse();
      const p = page(newestFirst, ctx.args);
      return {
        messages: p.items.map((m) => listedMessage(ctx, m)),
        has_more: p.next !== "",
        pin_count: 0,
        response_metadata: { next_cursor: p.next },
      };
    },
  },

  "conversations.replies": {
    auth: true,
    scopes: CONV_HISTORY,
    handler: (ctx) => {
      const ch = readable(ctx);
      if (!ch.members.has(actor(ctx).userId)) throw new SlackApiError("not_in_channel");
      const ts = ctx.args.required("ts", "thread_not_found");
      const within = timeRange(ctx.args);
      const parent = ctx.ws.findMessage(ch, ts);
      if (!parent) throw new SlackApiError("thread_not_found");
      const root = parent.thread_ts ?? parent.ts;
      const rootMsg = ctx.ws.findMessage(ch, root) ?? parent;
      // The parent comes first whatever the range; the range selects among the replies.
      const p = page([rootMsg, ...ctx.ws.replies(ch.id, root).filter(within)], ctx.args);
      return {
        messages: p.items.map((m) => listedMessage(ctx, m)),
        has_more: p.next !== "",
        response_metadata: { next_cursor: p.next },
      };
    },
  },

  "usergroups.list": {
    auth: true,
    scopes: ["usergroups:read"],
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
    scopes: ["usergroups:read"],
    handler: ({ ws, args }) => {
      const g = ws.usergroups.get(args.required("usergroup", "no_such_subteam"));
      if (!g) throw new SlackApiError("no_such_subteam");
      return { users: [...g.users] };
    },
  },

  "team.info": {
    auth: true,
    scopes: ["team:read"],
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
