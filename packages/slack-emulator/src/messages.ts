import { linkedAsStored, linkedOf, rememberLinked } from "./autolinks.ts";
import { validateBlocks } from "./blockkit.ts";
import { Directory } from "./directory.ts";
import { argumentError, SlackApiError } from "./errors.ts";
import { slackId } from "./ids.ts";
import {
  type Mention,
  mentionsInAttachments,
  mentionsInBlocks,
  mentionsInText,
  type Notification,
  type NotificationSurface,
} from "./mentions.ts";
import {
  type Channel,
  type EphemeralMessage,
  type Message,
  type MessageContent,
  type PostOptions,
  SCHEDULE_HORIZON_SEC,
  type ScheduledMessage,
  withIds,
} from "./model.ts";
import { linkNames } from "./slash-text.js";

/**
 * The message store: messages, thread replies, ephemerals and scheduled messages with Slack's
 * rules for each (content limits, threading, who may edit), and who each message notifies.
 * Rules break with SlackApiError carrying Slack's own error names.
 */
export class MessageStore extends Directory {
  readonly scheduled = new Map<string, ScheduledMessage>();
  readonly ephemerals: EphemeralMessage[] = [];
  /** who each message would notify, in order (mentions.ts) */
  readonly notifications: Notification[] = [];
  private notificationSeq = 0;

  checkContent(content: MessageContent, requireSomething: boolean, maxText = 40_000): void {
    const hasText = typeof content.text === "string" && content.text.length > 0;
    const hasBlocks = Array.isArray(content.blocks) && content.blocks.length > 0;
    const hasAttachments = Array.isArray(content.attachments) && content.attachments.length > 0;
    if (requireSomething && !hasText && !hasBlocks && !hasAttachments) {
      throw new SlackApiError("no_text");
    }
    if ((content.text?.length ?? 0) > maxText) throw new SlackApiError("msg_too_long");
    if (content.blocks !== undefined) {
      const r = validateBlocks(content.blocks, { surface: "message" });
      if (!r.ok) throw argumentError("invalid_blocks", r.messages);
    }
    if ((content.attachments?.length ?? 0) > 100) throw new SlackApiError("too_many_attachments");
  }

  findMessage(ch: Channel, ts: string): Message | undefined {
    // Recent messages are the ones touched most (live cards), so search from the end.
    for (let i = ch.messages.length - 1; i >= 0; i--) {
      const m = ch.messages[i];
      if (m && m.ts === ts) return m;
    }
    return undefined;
  }

  /** The message a reply with this thread_ts goes under: a reply's own parent for a reply. */
  threadParent(ch: Channel, threadTs: string): Message | undefined {
    const m = this.findMessage(ch, threadTs);
    if (m?.thread_ts !== undefined && m.thread_ts !== m.ts)
      return this.findMessage(ch, m.thread_ts);
    return m;
  }

  /** Top-level messages of a channel (thread replies excluded unless broadcast). */
  topLevel(channel: string): Message[] {
    const ch = this.channels.get(channel);
    if (!ch) return [];
    return ch.messages.filter(
      (m) => m.thread_ts === undefined || m.thread_ts === m.ts || m.subtype === "thread_broadcast",
    );
  }

  /** The replies under a thread parent, oldest first. */
  replies(channel: string, threadTs: string): Message[] {
    const ch = this.channels.get(channel);
    if (!ch) return [];
    return ch.messages.filter((m) => m.thread_ts === threadTs && m.ts !== threadTs);
  }

  postMessage(
    ch: Channel,
    author: string,
    content: MessageContent & {
      thread_ts?: string | undefined;
      reply_broadcast?: boolean | undefined;
      metadata?: unknown;
      /** link bare @names and #channels in the text (link_names / parse=full) */
      link_names?: boolean | undefined;
    },
    opts: PostOptions = { via: "chat.postMessage" },
    /** files.completeUploadExternal: the files are the message, the text may be empty */
    allowEmpty = false,
  ): Message {
    this.checkContent(content, !allowEmpty, opts.maxText);
    let parent: Message | undefined;
    let orphanOf: string | undefined;
    if (content.thread_ts !== undefined) {
      // Slack threads a reply-to-a-reply under the parent. A ts that names no message is no
      // documented error: Slack keeps the reply under that ts, where nobody sees it. So does
      // the emulator, with a warning on the call so a test can see the app got it wrong.
      parent = this.threadParent(ch, content.thread_ts);
      if (!parent) {
        orphanOf = content.thread_ts;
        opts.warn?.("thread_ts_not_found");
      }
    }
    const authorUser = this.users.get(author);
    const sent = content.text ?? "";
    const stored = linkedAsStored(
      content.link_names ? linkNames(sent, this.directory(author)) : sent,
    );
    const msg: Message = {
      type: "message",
      ts: this.nextTs(),
      user: author,
      team: this.team.id,
      text: stored.text,
    };
    rememberLinked(msg, opts.linked ?? stored.linked);
    if (orphanOf !== undefined) msg.thread_ts = orphanOf;
    if (authorUser?.is_bot) {
      msg.bot_id = authorUser.bot_id ?? this.app.botId;
      msg.app_id = authorUser.app_id ?? this.app.appId;
    }
    if (content.blocks !== undefined) msg.blocks = withIds(content.blocks);
    if (content.attachments !== undefined) msg.attachments = structuredClone(content.attachments);
    if (content.metadata !== undefined) msg.metadata = structuredClone(content.metadata);
    if (parent) {
      msg.thread_ts = parent.ts;
      if (content.reply_broadcast) msg.subtype = "thread_broadcast";
      parent.thread_ts = parent.ts;
      parent.reply_count = (parent.reply_count ?? 0) + 1;
      const users = new Set(parent.reply_users ?? []);
      users.add(author);
      parent.reply_users = [...users];
      parent.reply_users_count = users.size;
      parent.latest_reply = msg.ts;
    }
    ch.messages.push(msg);
    this.notify(ch, msg, author, { via: opts.via, ephemeral: false, edit: false });
    return msg;
  }

  // ---------------------------------------------------------------- notifications

  /** Records who a message would notify (see mentions.ts for Slack's rules). */
  private notify(
    ch: Channel,
    m: { ts: string; text: string; blocks?: unknown[]; attachments?: unknown[] },
    author: string,
    o: { via: string; ephemeral: boolean; edit: boolean },
  ): void {
    const members = [...ch.members].filter((u) => u !== author && !this.users.get(u)?.is_bot);
    const add = (
      kind: Notification["kind"],
      surface: NotificationSurface,
      target: string | undefined,
      reached: string[],
      fallback?: Notification["reason"],
    ) => {
      const reason = o.ephemeral
        ? "ephemeral"
        : o.edit
          ? "edit"
          : surface === "attachments"
            ? "attachments"
            : reached.length === 0
              ? fallback
              : undefined;
      const users = reason === undefined ? reached : [];
      this.notifications.push({
        seq: ++this.notificationSeq,
        via: o.via,
        channel: ch.id,
        ts: m.ts,
        author,
        kind,
        ...(target !== undefined && { target }),
        surface,
        users,
        notified: users.length > 0,
        ...(reason !== undefined && { reason }),
        ephemeral: o.ephemeral,
      });
    };
    const each = (mentions: Mention[], surface: NotificationSurface) => {
      for (const x of mentions) {
        switch (x.kind) {
          case "user":
            add(
              "user",
              surface,
              x.id,
              members.filter((u) => u === x.id),
              "not_in_channel",
            );
            break;
          case "usergroup": {
            const group = new Set(this.usergroups.get(x.id ?? "")?.users ?? []);
            add(
              "usergroup",
              surface,
              x.id,
              members.filter((u) => group.has(u)),
              "not_in_channel",
            );
            break;
          }
          case "everyone":
            add("everyone", surface, undefined, ch.is_general ? members : [], "outside_general");
            break;
          default:
            add(x.kind, surface, undefined, members, "not_in_channel");
        }
      }
    };
    each(mentionsInText(m.text), "text");
    if (m.blocks) each(mentionsInBlocks(m.blocks), "blocks");
    if (m.attachments) each(mentionsInAttachments(m.attachments), "attachments");
    if ((ch.is_im || ch.is_mpim) && this.users.get(author)?.is_bot && !o.ephemeral && !o.edit) {
      add("dm", "dm", undefined, members);
    }
  }

  updateMessage(
    ch: Channel,
    ts: string,
    actor: string | undefined,
    content: MessageContent & { metadata?: unknown },
    via = "chat.update",
  ): Message {
    const msg = this.findMessage(ch, ts);
    if (!msg) throw new SlackApiError("message_not_found");
    if (actor !== undefined && msg.user !== actor) throw new SlackApiError("cant_update_message");
    this.checkContent(content, true);
    if (content.text !== undefined) {
      const stored = linkedAsStored(content.text);
      msg.text = stored.text;
      rememberLinked(msg, stored.linked);
    }
    if (content.blocks !== undefined) msg.blocks = withIds(content.blocks);
    if (content.attachments !== undefined) msg.attachments = structuredClone(content.attachments);
    if (content.metadata !== undefined) msg.metadata = structuredClone(content.metadata);
    msg.edited = { user: msg.user, ts: this.nextTs() };
    this.notify(ch, msg, msg.user, { via, ephemeral: false, edit: true });
    return msg;
  }

  deleteMessage(ch: Channel, ts: string, actor: string | undefined): Message {
    const i = ch.messages.findIndex((m) => m.ts === ts);
    const msg = ch.messages[i];
    if (!msg) throw new SlackApiError("message_not_found");
    if (actor !== undefined && msg.user !== actor) throw new SlackApiError("cant_delete_message");
    ch.messages.splice(i, 1);
    ch.deleted.push(msg);
    if (msg.thread_ts !== undefined && msg.thread_ts !== msg.ts) {
      const parent = this.findMessage(ch, msg.thread_ts);
      if (parent?.reply_count) {
        parent.reply_count -= 1;
        const rest = this.replies(ch.id, parent.ts);
        if (rest.length === 0) {
          delete parent.latest_reply;
        } else {
          parent.latest_reply = rest[rest.length - 1]?.ts ?? parent.ts;
        }
      }
    }
    return msg;
  }

  postEphemeral(
    ch: Channel,
    user: string,
    content: MessageContent & { thread_ts?: string | undefined },
    via: EphemeralMessage["via"],
  ): EphemeralMessage {
    this.checkContent(content, true);
    // An unknown person is not in the channel either: the one refusal the reference documents.
    if (!this.users.has(user) || !ch.members.has(user)) {
      throw new SlackApiError("user_not_in_channel");
    }
    const e: EphemeralMessage = {
      channel: ch.id,
      user,
      ts: this.nextTs(),
      text: content.text ?? "",
      via,
      replaced: false,
      deleted: false,
      ...(content.blocks !== undefined && { blocks: withIds(content.blocks) }),
      ...(content.attachments !== undefined && {
        attachments: structuredClone(content.attachments),
      }),
      ...(content.thread_ts !== undefined && { thread_ts: content.thread_ts }),
    };
    this.ephemerals.push(e);
    this.notify(ch, e, this.app.botUserId, { via, ephemeral: true, edit: false });
    return e;
  }

  /** Ephemeral messages still showing, optionally for one channel and/or one user. */
  ephemeralsFor(filter: { channel?: string; user?: string } = {}): EphemeralMessage[] {
    return this.ephemerals.filter(
      (e) =>
        !e.deleted &&
        (filter.channel === undefined || e.channel === filter.channel) &&
        (filter.user === undefined || e.user === filter.user),
    );
  }

  permalink(ch: Channel, ts: string): string {
    const thread = this.findMessage(ch, ts);
    const p = `https://${this.team.domain}.slack.com/archives/${ch.id}/p${ts.replace(".", "")}`;
    if (thread?.thread_ts !== undefined && thread.thread_ts !== ts) {
      return `${p}?thread_ts=${thread.thread_ts}&cid=${ch.id}`;
    }
    return p;
  }

  // ---------------------------------------------------------------- scheduled messages

  scheduleMessage(
    ch: Channel,
    author: string,
    postAt: number,
    content: MessageContent & { thread_ts?: string | undefined },
    /** scheduled with metadata: listed, but never posted (ScheduledMessage.withMetadata) */
    withMetadata = false,
  ): ScheduledMessage {
    this.checkContent(content, true);
    const nowSec = this.nowSec();
    if (!Number.isFinite(postAt) || postAt <= nowSec) throw new SlackApiError("time_in_past");
    if (postAt > nowSec + SCHEDULE_HORIZON_SEC) throw new SlackApiError("time_too_far");
    let near = 0;
    for (const s of this.scheduled.values()) {
      if (s.channel === ch.id && Math.abs(s.post_at - postAt) < 300) near++;
    }
    if (near >= 30) throw new SlackApiError("restricted_too_many");
    const stored = linkedAsStored(content.text ?? "");
    const s: ScheduledMessage = {
      id: slackId("Q", 10),
      channel: ch.id,
      post_at: Math.floor(postAt),
      date_created: nowSec,
      text: stored.text,
      author,
      ...(content.blocks !== undefined && { blocks: structuredClone(content.blocks) }),
      ...(content.attachments !== undefined && {
        attachments: structuredClone(content.attachments),
      }),
      ...(content.thread_ts !== undefined && { thread_ts: content.thread_ts }),
      ...(withMetadata && { withMetadata }),
    };
    rememberLinked(s, stored.linked);
    this.scheduled.set(s.id, s);
    return s;
  }

  deleteScheduled(ch: Channel, id: string): void {
    const s = this.scheduled.get(id);
    if (!s || s.channel !== ch.id) throw new SlackApiError("invalid_scheduled_message_id");
    this.scheduled.delete(id);
  }

  /** Posts every scheduled message whose time has come; returns what was posted. */
  releaseDue(): Message[] {
    const posted: Message[] = [];
    const nowSec = this.nowSec();
    const due = [...this.scheduled.values()]
      .filter((s) => s.post_at <= nowSec)
      .sort((a, b) => a.post_at - b.post_at);
    for (const s of due) {
      this.scheduled.delete(s.id);
      const ch = this.channels.get(s.channel);
      if (!ch || s.withMetadata) continue;
      try {
        posted.push(
          this.postMessage(
            ch,
            s.author,
            {
              text: s.text,
              blocks: s.blocks,
              attachments: s.attachments,
              thread_ts: s.thread_ts,
            },
            { via: "scheduled", linked: linkedOf(s) },
          ),
        );
      } catch {
        // Slack drops a scheduled message it can no longer deliver (thread gone); so do we.
      }
    }
    return posted;
  }
}
