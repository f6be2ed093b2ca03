import { SlackApiError } from "../errors.ts";
import { channelJson } from "../shapes.ts";
import type { Channel, Json, Message } from "../workspace.ts";
import { page, timeRange } from "./args.ts";
import { actor, type CallContext, type MethodSpec, requireConversationScope } from "./types.ts";

/**
 * conversations.*: what a bot token may see and read.
 *
 * - A private channel, DM or group DM the bot is not in does not exist for it
 *   (channel_not_found); a public one it is not in exists.
 * - Reading messages needs membership: history in a public channel it is not in answers
 *   not_in_channel (deno-slack-sdk#128); replies answers channel_not_found there, the only
 *   refusal its reference documents (xorbitsai/xagent#1663 reads the same).
 * - Each call needs the scope for the kind of conversation named (channels:/groups:/im:/mpim:).
 * - join: public channels only.
 */

function named(ctx: CallContext): Channel {
  return ctx.ws.visibleChannel(ctx.args.resolve("channel", "channel_not_found"), actor(ctx).userId);
}

/** A message as the read methods list it: metadata only when asked with include_all_metadata. */
function listed(ctx: CallContext, m: Message): Json {
  const out = ctx.ws.messageJson(m);
  if (ctx.args.bool("include_all_metadata") !== true) delete out.metadata;
  return out;
}

const TYPES = new Set(["public_channel", "private_channel", "im", "mpim"]);

export const CONVERSATIONS: Readonly<Record<string, MethodSpec>> = {
  "conversations.info": {
    auth: true,
    errors: ["channel_not_found"],
    handler: (ctx) => {
      const ch = named(ctx);
      requireConversationScope(ctx, ch, "read");
      return {
        channel: channelJson(
          ctx.ws,
          ch,
          actor(ctx).userId,
          ctx.args.bool("include_num_members") === true,
        ),
      };
    },
  },

  "conversations.list": {
    auth: true,
    errors: ["invalid_cursor", "invalid_types", "invalid_limit"],
    handler: (ctx) => {
      const t = actor(ctx);
      const types = new Set(ctx.args.csv("types"));
      if (types.size === 0) types.add("public_channel");
      for (const type of types) if (!TYPES.has(type)) throw new SlackApiError("invalid_types");
      const limit = ctx.args.num("limit");
      if (limit !== undefined && (limit < 1 || limit > 1000)) {
        throw new SlackApiError("invalid_limit");
      }
      const scopeOf: Record<string, string> = {
        public_channel: "channels:read",
        private_channel: "groups:read",
        im: "im:read",
        mpim: "mpim:read",
      };
      for (const type of types) {
        const needed = scopeOf[type]!;
        if (!t.scopes.includes(needed)) {
          throw new SlackApiError("missing_scope", { needed, provided: t.scopes.join(",") });
        }
      }
      const excludeArchived = ctx.args.bool("exclude_archived") === true;
      const all = [...ctx.ws.channels.values()].filter((c) => {
        if (excludeArchived && c.is_archived) return false;
        if (c.is_im) return types.has("im") && c.members.has(t.userId);
        if (c.is_mpim) return types.has("mpim") && c.members.has(t.userId);
        if (c.is_private) return types.has("private_channel") && c.members.has(t.userId);
        return types.has("public_channel");
      });
      const p = page(all, ctx.args);
      return {
        channels: p.items.map((c) => channelJson(ctx.ws, c, t.userId, true)),
        response_metadata: { next_cursor: p.next },
      };
    },
  },

  "conversations.members": {
    auth: true,
    errors: ["channel_not_found", "invalid_cursor", "invalid_limit"],
    handler: (ctx) => {
      const ch = named(ctx);
      requireConversationScope(ctx, ch, "read");
      const limit = ctx.args.num("limit");
      if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > 1000)) {
        throw new SlackApiError("invalid_limit");
      }
      const p = page([...ch.members], ctx.args);
      return { members: p.items, response_metadata: { next_cursor: p.next } };
    },
  },

  "conversations.join": {
    auth: true,
    errors: ["channel_not_found", "method_not_supported_for_channel_type", "is_archived"],
    handler: (ctx) => {
      const t = actor(ctx);
      const ch = named(ctx);
      if (ch.is_private || ch.is_im || ch.is_mpim) {
        throw new SlackApiError("method_not_supported_for_channel_type");
      }
      if (ch.is_archived) throw new SlackApiError("is_archived");
      const already = ch.members.has(t.userId);
      ch.members.add(t.userId);
      return {
        channel: channelJson(ctx.ws, ch, t.userId),
        ...(already && {
          warning: "already_in_channel",
          response_metadata: { warnings: ["already_in_channel"] },
        }),
      };
    },
  },

  "conversations.open": {
    auth: true,
    errors: ["channel_not_found", "user_not_found", "users_list_not_supplied", "too_many_users"],
    handler: (ctx) => {
      if (ctx.args.has("channel")) return { channel: { id: named(ctx).id } };
      const users = ctx.args.csv("users");
      if (users.length === 0) throw new SlackApiError("users_list_not_supplied");
      if (users.length > 8) throw new SlackApiError("too_many_users");
      for (const u of users) if (!ctx.ws.user(u)) throw new SlackApiError("user_not_found");
      if (users.length === 1) return { channel: { id: ctx.ws.dmWith(users[0]!).id } };
      return { channel: { id: ctx.ws.groupDm(users).id } };
    },
  },

  "conversations.history": {
    auth: true,
    errors: [
      "channel_not_found",
      "not_in_channel",
      "invalid_cursor",
      "invalid_ts_latest",
      "invalid_ts_oldest",
    ],
    handler: (ctx) => {
      const ch = named(ctx);
      requireConversationScope(ctx, ch, "history");
      if (!ch.members.has(actor(ctx).userId)) throw new SlackApiError("not_in_channel");
      const within = timeRange(ctx.args);
      const newestFirst = ctx.ws.topLevel(ch.id).filter(within).reverse();
      const p = page(newestFirst, ctx.args, {
        ...(ctx.historyPageMax !== undefined && {
          defaultLimit: ctx.historyPageMax,
          maxLimit: ctx.historyPageMax,
        }),
      });
      return {
        messages: p.items.map((m) => listed(ctx, m)),
        has_more: p.next !== "",
        pin_count: 0,
        response_metadata: { next_cursor: p.next },
      };
    },
  },

  "conversations.replies": {
    auth: true,
    errors: [
      "channel_not_found",
      "thread_not_found",
      "invalid_cursor",
      "invalid_ts_latest",
      "invalid_ts_oldest",
    ],
    handler: (ctx) => {
      const ch = named(ctx);
      requireConversationScope(ctx, ch, "history");
      if (!ch.members.has(actor(ctx).userId)) throw new SlackApiError("channel_not_found");
      const ts = ctx.args.resolve("ts", "thread_not_found");
      const within = timeRange(ctx.args);
      const parent = ctx.ws.findMessage(ch, ts);
      if (!parent) throw new SlackApiError("thread_not_found");
      const root = parent.thread_ts ?? parent.ts;
      const rootMsg = ctx.ws.findMessage(ch, root) ?? parent;
      // The parent comes first whatever the range; the range selects among the replies.
      const p = page([rootMsg, ...ctx.ws.replies(ch.id, root).filter(within)], ctx.args, {
        ...(ctx.historyPageMax !== undefined && {
          defaultLimit: ctx.historyPageMax,
          maxLimit: ctx.historyPageMax,
        }),
      });
      return {
        messages: p.items.map((m) => listed(ctx, m)),
        has_more: p.next !== "",
        response_metadata: { next_cursor: p.next },
      };
    },
  },
};
