import { SlackApiError } from "../errors.ts";
import type { Channel } from "../model.ts";
import type { MessageContent } from "../workspace.ts";
import { page } from "./args.ts";
import { actor, type CallContext, type MethodSpec } from "./types.ts";

/**
 * chat.*: where the bot may post, edit and delete, as Slack decides it.
 *
 * - postMessage / scheduleMessage: any conversation the bot is in; a public one it is not in
 *   only with chat:write.public (else not_in_channel); a private channel, DM or group DM it is
 *   not in does not exist for it (channel_not_found).
 * - postEphemeral: the bot must be in the conversation (a public one it is not in:
 *   not_in_channel, whatever chat:write.public says; node-slack-sdk#977, ifvictr/prox#30), and
 *   so must the person (user_not_in_channel).
 * - update / delete: only in conversations the bot can see, only its own messages.
 */

const CONTENT_ERRORS = ["no_text", "invalid_blocks", "invalid_blocks_format"] as const;

/** The message body of a call; markdown_text stands alone (markdown_text_conflict). */
function content(ctx: CallContext, attachmentsError: string): MessageContent {
  const a = ctx.args;
  const markdown = a.str("markdown_text");
  const text = a.str("text");
  const blocks = a.list("blocks", "invalid_blocks_format");
  if (markdown !== undefined && (text !== undefined || blocks !== undefined)) {
    throw new SlackApiError("markdown_text_conflict");
  }
  return {
    text: text ?? markdown,
    blocks,
    attachments: a.list("attachments", attachmentsError),
  };
}

/**
 * A message's `metadata`: JSON (else invalid_metadata_format) holding a string `event_type` and
 * an object `event_payload`, as Slack's message-metadata format requires (else
 * invalid_metadata_schema).
 */
function metadataArg(ctx: CallContext): unknown {
  const m = ctx.args.json("metadata", "invalid_metadata_format");
  if (m === undefined) return undefined;
  const o = m as { event_type?: unknown; event_payload?: unknown };
  const payload = o?.event_payload;
  if (
    typeof m !== "object" ||
    m === null ||
    Array.isArray(m) ||
    typeof o.event_type !== "string" ||
    o.event_type === "" ||
    typeof payload !== "object" ||
    payload === null ||
    Array.isArray(payload)
  ) {
    throw new SlackApiError("invalid_metadata_schema");
  }
  return m;
}

/**
 * A channel's posting limits beyond membership (Channel.posting) and a locked thread: a
 * read-only channel takes no post, a thread-only one no top-level post, a locked thread no reply
 * (`locked` false for chat.scheduleMessage, whose reference does not list that error).
 */
function checkPosting(
  ctx: CallContext,
  ch: Channel,
  threadTs: string | undefined,
  locked: boolean,
): void {
  if (ch.posting === "read_only") throw new SlackApiError("restricted_action_read_only_channel");
  if (ch.posting === "thread_only" && threadTs === undefined) {
    throw new SlackApiError("restricted_action_thread_only_channel");
  }
  if (!locked || threadTs === undefined) return;
  if (ctx.ws.threadParent(ch, threadTs)?.thread_locked) {
    throw new SlackApiError("restricted_action_thread_locked");
  }
}

function channelRef(ctx: CallContext): string {
  return ctx.args.resolve("channel", "channel_not_found");
}

export const CHAT: Readonly<Record<string, MethodSpec>> = {
  "chat.postMessage": {
    auth: true,
    errors: [
      ...CONTENT_ERRORS,
      "channel_not_found",
      "not_in_channel",
      "is_archived",
      "invalid_metadata_format",
      "invalid_metadata_schema",
      "restricted_action_read_only_channel",
      "restricted_action_thread_only_channel",
      "restricted_action_thread_locked",
      "too_many_attachments",
      "markdown_text_conflict",
    ],
    handler: (ctx) => {
      const t = actor(ctx);
      const ch = ctx.ws.postableChannel(channelRef(ctx), t.userId, t.scopes);
      checkPosting(ctx, ch, ctx.args.str("thread_ts"), true);
      const body = content(ctx, "invalid_arguments");
      // Slack's page says it truncates past 40,000 characters; measured, it posts them whole
      // (brekkylab/backlot#196). Either way it is no error for this method: a warning here.
      if ((body.text?.length ?? 0) > 40_000) ctx.warn("text_over_40000_characters");
      const msg = ctx.ws.postMessage(
        ch,
        t.userId,
        {
          ...body,
          thread_ts: ctx.args.str("thread_ts"),
          reply_broadcast: ctx.args.bool("reply_broadcast"),
          metadata: metadataArg(ctx),
          link_names: ctx.args.bool("link_names") === true || ctx.args.str("parse") === "full",
        },
        { via: "chat.postMessage", warn: ctx.warn, maxText: Number.POSITIVE_INFINITY },
      );
      return { channel: ch.id, ts: msg.ts, message: ctx.ws.messageJson(msg) };
    },
  },

  "chat.update": {
    auth: true,
    errors: [
      ...CONTENT_ERRORS,
      "channel_not_found",
      "message_not_found",
      "cant_update_message",
      "is_inactive",
      "invalid_attachments",
      "invalid_metadata_format",
      "invalid_metadata_schema",
      "msg_too_long",
      "too_many_attachments",
      "markdown_text_conflict",
    ],
    handler: (ctx) => {
      const t = actor(ctx);
      const ch = ctx.ws.visibleChannel(channelRef(ctx), t.userId);
      const ts = ctx.args.resolve("ts", "message_not_found");
      // Slack: "The message cannot be edited within a frozen, archived or deleted channel."
      if (ch.is_archived) throw new SlackApiError("is_inactive");
      const msg = ctx.ws.updateMessage(ch, ts, t.userId, {
        ...content(ctx, "invalid_attachments"),
        metadata: metadataArg(ctx),
      });
      return { channel: ch.id, ts: msg.ts, text: msg.text, message: ctx.ws.messageJson(msg) };
    },
  },

  "chat.delete": {
    auth: true,
    errors: ["channel_not_found", "message_not_found", "cant_delete_message"],
    handler: (ctx) => {
      const t = actor(ctx);
      const ch = ctx.ws.visibleChannel(channelRef(ctx), t.userId);
      const ts = ctx.args.resolve("ts", "message_not_found");
      ctx.ws.deleteMessage(ch, ts, t.userId);
      return { channel: ch.id, ts };
    },
  },

  "chat.postEphemeral": {
    auth: true,
    errors: [
      ...CONTENT_ERRORS,
      "channel_not_found",
      "not_in_channel",
      "user_not_in_channel",
      "is_archived",
      "invalid_attachments",
      "msg_too_long",
      "too_many_attachments",
      "markdown_text_conflict",
    ],
    handler: (ctx) => {
      const t = actor(ctx);
      const ch = ctx.ws.ephemeralChannel(channelRef(ctx), t.userId);
      const user = ctx.args.resolve("user", "user_not_in_channel");
      const e = ctx.ws.postEphemeral(
        ch,
        user,
        { ...content(ctx, "invalid_attachments"), thread_ts: ctx.args.str("thread_ts") },
        "chat.postEphemeral",
      );
      return { message_ts: e.ts };
    },
  },

  "chat.scheduleMessage": {
    auth: true,
    errors: [
      ...CONTENT_ERRORS,
      "channel_not_found",
      "not_in_channel",
      "is_archived",
      "invalid_time",
      "time_in_past",
      "time_too_far",
      "restricted_too_many",
      "restricted_action_read_only_channel",
      "restricted_action_thread_only_channel",
      "msg_too_long",
      "invalid_metadata_format",
      "invalid_metadata_schema",
      "too_many_attachments",
      "markdown_text_conflict",
    ],
    handler: (ctx) => {
      const t = actor(ctx);
      const ch = ctx.ws.postableChannel(channelRef(ctx), t.userId, t.scopes);
      checkPosting(ctx, ch, ctx.args.str("thread_ts"), false);
      const postAt = Number(ctx.args.resolve("post_at", "invalid_time"));
      if (!Number.isFinite(postAt)) throw new SlackApiError("invalid_time");
      // Checked as chat.postMessage checks it. Slack's bug alert on this method: "Messages
      // scheduled with chat.scheduleMessage will not post if the metadata parameter is used."
      const metadata = metadataArg(ctx);
      const s = ctx.ws.scheduleMessage(
        ch,
        t.userId,
        postAt,
        { ...content(ctx, "invalid_arguments"), thread_ts: ctx.args.str("thread_ts") },
        metadata !== undefined,
      );
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
    errors: ["channel_not_found", "invalid_scheduled_message_id"],
    handler: (ctx) => {
      const ch = ctx.ws.visibleChannel(channelRef(ctx), actor(ctx).userId);
      ctx.ws.deleteScheduled(
        ch,
        ctx.args.resolve("scheduled_message_id", "invalid_scheduled_message_id"),
      );
      return {};
    },
  },

  "chat.scheduledMessages.list": {
    auth: true,
    errors: ["invalid_channel", "invalid_cursor"],
    handler: (ctx) => {
      const t = actor(ctx);
      const a = ctx.args;
      let channel: string | undefined;
      if (a.has("channel")) {
        try {
          channel = ctx.ws.visibleChannel(a.resolve("channel", "invalid_channel"), t.userId).id;
        } catch {
          throw new SlackApiError("invalid_channel");
        }
      }
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
    errors: ["channel_not_found", "message_not_found"],
    handler: (ctx) => {
      const ch = ctx.ws.visibleChannel(channelRef(ctx), actor(ctx).userId);
      const ts = ctx.args.resolve("message_ts", "message_not_found");
      if (!ctx.ws.findMessage(ch, ts)) throw new SlackApiError("message_not_found");
      return { channel: ch.id, permalink: ctx.ws.permalink(ch, ts) };
    },
  },
};
