import { linkedAsStored, linkedOf, rememberLinked } from "./autolinks.ts";
import { validateBlocks } from "./blockkit.ts";
import { argumentError, SlackApiError } from "./errors.ts";
import { formatTs, randomHex, slackId } from "./ids.ts";
import {
  type Mention,
  mentionsInAttachments,
  mentionsInBlocks,
  mentionsInText,
  type Notification,
  type NotificationSurface,
} from "./mentions.ts";
import {
  type AuthCode,
  type Channel,
  type EphemeralMessage,
  type Json,
  type Message,
  type MessageContent,
  type PostOptions,
  RESPONSE_URL_MAX_USES,
  RESPONSE_URL_TTL_MS,
  type ResponseUrlContext,
  type ResponseUrlRecord,
  SCHEDULE_HORIZON_SEC,
  type ScheduledMessage,
  type TokenRecord,
  TRIGGER_TTL_MS,
  type TriggerRecord,
  type User,
  type Usergroup,
  type ViewOutcome,
  type ViewRecord,
  type WorkspaceOptions,
  withIds,
} from "./model.ts";
import * as oauth from "./oauth.ts";
import {
  DEFAULT_APP,
  DEFAULT_CHANNELS,
  DEFAULT_TEAM,
  DEFAULT_USERGROUPS,
  DEFAULT_USERS,
  type SeedApp,
  type SeedEnterprise,
  type SeedTeam,
  type WorkspaceSeed,
} from "./seed.ts";
import * as shapes from "./shapes.ts";
import { linkNames } from "./slash-text.js";
import * as views from "./views.ts";

export * from "./model.ts";

/** The default delay of a file share after files.completeUploadExternal answers (Workspace). */
export const DEFAULT_FILE_SHARE_DELAY_MS = 300;

/**
 * The emulated workspace: people, channels, messages, views, tokens. Pure state and rules,
 * no HTTP: the server (server.ts) turns Web API calls into these operations, and the
 * playground page can read the same objects. Rules break with SlackApiError carrying
 * Slack's own error names. Views, tokens and the JSON shapes are in views.ts, oauth.ts and
 * shapes.ts; this file keeps people, conversations, messages and their rules (longer than
 * ~400 lines because those rules share the state they guard).
 */

export class Workspace {
  readonly team: SeedTeam;
  /** the Enterprise organization the workspace belongs to (seed.enterprise) */
  readonly enterprise: SeedEnterprise | undefined;
  /** the app is installed org-wide (seed.orgInstall) */
  readonly orgInstall: boolean;
  readonly app: SeedApp;
  readonly users = new Map<string, User>();
  readonly channels = new Map<string, Channel>();
  readonly usergroups = new Map<string, Usergroup>();
  readonly views = new Map<string, ViewRecord>();
  /** user → modal view ids, bottom first; at most VIEW_STACK_LIMIT */
  readonly modalStacks = new Map<string, string[]>();
  /** user → App Home view id */
  readonly homeViews = new Map<string, string>();
  readonly scheduled = new Map<string, ScheduledMessage>();
  readonly ephemerals: EphemeralMessage[] = [];
  /** who each message would notify, in order (mentions.ts) */
  readonly notifications: Notification[] = [];
  private notificationSeq = 0;
  readonly tokens = new Map<string, TokenRecord>();
  /** the deprecated verification token Slack still puts in every payload */
  readonly verificationToken = randomHex(12);
  readonly installerUserId: string;
  botToken: string;
  now: () => number;
  origin: string;
  /** when set, oauth.v2.access issues expiring tokens with refresh tokens (token rotation) */
  tokenRotation: { expiresInSec: number } | undefined;
  /**
   * How long after files.completeUploadExternal answers its share appears in the channel: Slack
   * shares asynchronously (slackapi/bolt-js#2115: "the API response does not yet have complete
   * shares"). 0 shares before answering.
   */
  fileShareDelayMs = DEFAULT_FILE_SHARE_DELAY_MS;

  private lastTsMicros = 0;
  private readonly triggers = new Map<string, TriggerRecord>();
  private readonly responseUrls = new Map<string, ResponseUrlRecord>();
  /** pending OAuth codes (oauth.ts) */
  readonly authCodes = new Map<string, AuthCode>();
  /** refresh token → whose (oauth.ts) */
  readonly refreshTokens = new Map<string, { userId: string; kind: "bot" | "user" }>();
  /** long-lived tokens already moved to rotation with oauth.v2.exchange (oauth.ts) */
  readonly exchanged = new Set<string>();
  /** refresh grants answered so far (oauth.ts) */
  refreshCount = 0;
  /** Slack refuses every refresh (invalid_refresh_token), as after the app's tokens were revoked */
  refusedRefresh = false;

  constructor(seed: WorkspaceSeed = {}, opts: WorkspaceOptions = {}) {
    this.now = opts.now ?? Date.now;
    this.origin = opts.origin ?? "http://127.0.0.1";
    this.team = seed.team ?? DEFAULT_TEAM;
    this.enterprise = seed.enterprise;
    if (seed.orgInstall && !seed.enterprise) throw new Error("orgInstall needs an enterprise");
    this.orgInstall = seed.orgInstall === true;
    this.app = { ...DEFAULT_APP, ...seed.app };
    const createdSec = Math.floor(this.now() / 1000) - 86_400 * 30;
    const users = seed.users ?? DEFAULT_USERS;
    for (const u of users) {
      this.users.set(u.id, {
        id: u.id,
        team_id: u.team_id ?? this.team.id,
        name: u.name,
        real_name: u.real_name,
        tz: u.tz,
        email: u.email,
        is_admin: u.is_admin ?? u.is_owner ?? false,
        is_owner: u.is_owner ?? false,
        is_primary_owner: u.is_primary_owner ?? false,
        is_restricted: u.is_restricted ?? false,
        is_ultra_restricted: u.is_ultra_restricted ?? false,
        is_bot: false,
        title: u.title ?? "",
        deleted: false,
      });
    }
    this.users.set(
      this.app.botUserId,
      this.botUser(this.app.botUserId, this.app.name, this.app.botId),
    );
    const owner = users.find((u) => u.is_primary_owner) ?? users.find((u) => u.is_owner);
    this.installerUserId = seed.installerUserId ?? owner?.id ?? users[0]?.id ?? this.app.botUserId;
    for (const c of seed.channels ?? DEFAULT_CHANNELS) {
      const direct = c.is_im === true || c.is_mpim === true;
      const other = c.is_im ? c.members.find((m) => m !== this.app.botUserId) : undefined;
      this.channels.set(c.id, {
        id: c.id,
        name: c.name,
        is_private: direct || (c.is_private ?? false),
        is_im: c.is_im === true,
        is_mpim: c.is_mpim === true,
        ...(other !== undefined && { user: other }),
        is_general: c.is_general ?? false,
        is_archived: c.is_archived ?? false,
        ...(c.posting !== undefined && { posting: c.posting }),
        created: createdSec,
        creator: this.installerUserId,
        members: new Set(c.members),
        topic: c.topic ?? "",
        purpose: c.purpose ?? "",
        messages: [],
        deleted: [],
      });
    }
    for (const g of seed.usergroups ?? DEFAULT_USERGROUPS) {
      this.usergroups.set(g.id, {
        id: g.id,
        handle: g.handle,
        name: g.name,
        description: g.description ?? "",
        users: [...g.users],
        date_create: createdSec,
      });
    }
    this.botToken = seed.botToken ?? this.newToken("xoxb");
    this.tokens.set(this.botToken, {
      token: this.botToken,
      kind: "bot",
      userId: this.app.botUserId,
      scopes: [...(seed.botScopes ?? [])],
      expiresAt: undefined,
      refreshToken: undefined,
      revoked: false,
    });
  }

  // ---------------------------------------------------------------- time and ids

  /** Strictly increasing across the workspace, close to the clock, like Slack's. */
  nextTs(): string {
    const micros = Math.max(this.now() * 1000, this.lastTsMicros + 1);
    this.lastTsMicros = micros;
    return formatTs(micros);
  }

  nowSec(): number {
    return Math.floor(this.now() / 1000);
  }

  /** a fresh token string (oauth.ts) */
  newToken(prefix: "xoxb" | "xoxp"): string {
    const n = () => String(Math.floor(Math.random() * 9e12) + 1e12);
    return `${prefix}-${n()}-${n()}-${randomHex(12)}`;
  }

  // ---------------------------------------------------------------- people and places

  /**
   * Another app's bot in the workspace (its own user, bot and app ids), for a test to stage what
   * such an app can do that a person cannot, e.g. post a message carrying metadata.
   */
  addBot(name: string): User {
    const bot = this.botUser(slackId("U", 10), name, slackId("B", 10), slackId("A", 10));
    this.users.set(bot.id, bot);
    return bot;
  }

  /** A bot user (the app's own has no app_id here: it is `app.appId`). */
  private botUser(id: string, name: string, botId: string, appId?: string): User {
    return {
      id,
      team_id: this.team.id,
      name,
      real_name: name,
      tz: "America/Los_Angeles",
      email: undefined,
      is_admin: false,
      is_owner: false,
      is_primary_owner: false,
      is_restricted: false,
      is_ultra_restricted: false,
      is_bot: true,
      title: "",
      bot_id: botId,
      ...(appId !== undefined && { app_id: appId }),
      deleted: false,
    };
  }

  user(id: string): User | undefined {
    return this.users.get(id);
  }

  userByName(name: string): User | undefined {
    for (const u of this.users.values()) if (u.name === name) return u;
    return undefined;
  }

  /** A channel by id, by name, by "#name"; a user id resolves to the app's DM with them. */
  resolveChannel(ref: string): Channel | undefined {
    const direct = this.channels.get(ref);
    if (direct) return direct;
    const name = ref.startsWith("#") ? ref.slice(1) : ref;
    for (const c of this.channels.values()) if (!c.is_im && c.name === name) return c;
    if (/^[UW][A-Z0-9]+$/.test(ref) && this.users.has(ref)) return this.dmWith(ref);
    return undefined;
  }

  /** The app's DM with a user, created on first use as Slack does. */
  dmWith(userId: string): Channel {
    const bot = this.app.botUserId;
    for (const c of this.channels.values()) {
      if (c.is_im && c.members.has(userId) && c.members.has(bot)) return c;
    }
    const id = slackId("D", 10);
    const ch: Channel = {
      id,
      name: id,
      is_private: true,
      is_im: true,
      is_mpim: false,
      is_general: false,
      is_archived: false,
      created: this.nowSec(),
      creator: userId,
      user: userId,
      members: new Set([userId, this.app.botUserId]),
      topic: "",
      purpose: "",
      messages: [],
      deleted: [],
    };
    this.channels.set(id, ch);
    return ch;
  }

  /** A group DM of the app with these people (conversations.open with several users). */
  groupDm(users: readonly string[]): Channel {
    const want = new Set([...users, this.app.botUserId]);
    for (const c of this.channels.values()) {
      if (c.is_mpim && c.members.size === want.size && [...want].every((u) => c.members.has(u))) {
        return c;
      }
    }
    const id = slackId("C", 10);
    const names = users.map((u) => this.users.get(u)?.name ?? u);
    const ch: Channel = {
      id,
      name: `mpdm-${names.join("--")}-1`,
      is_private: true,
      is_im: false,
      is_mpim: true,
      is_general: false,
      is_archived: false,
      created: this.nowSec(),
      creator: this.app.botUserId,
      members: want,
      topic: "",
      purpose: "",
      messages: [],
      deleted: [],
    };
    this.channels.set(id, ch);
    return ch;
  }

  /**
   * What a caller may see: a private channel, DM or group DM only when in it (else it does not
   * exist for them: channel_not_found); every public channel.
   */
  visibleChannel(ref: string, actor: string): Channel {
    const ch = this.resolveChannel(ref);
    if (!ch || ((ch.is_private || ch.is_im || ch.is_mpim) && !ch.members.has(actor))) {
      throw new SlackApiError("channel_not_found");
    }
    return ch;
  }

  /**
   * Where the app may show an ephemeral message: only a conversation it is in. A public channel
   * it is not in answers not_in_channel even with chat:write.public (node-slack-sdk#977).
   */
  ephemeralChannel(ref: string, actor: string): Channel {
    const ch = this.visibleChannel(ref, actor);
    if (ch.is_archived) throw new SlackApiError("is_archived");
    if (!ch.members.has(actor)) throw new SlackApiError("not_in_channel");
    return ch;
  }

  /** Where an actor may post: members anywhere, others in public channels with chat:write.public. */
  postableChannel(ref: string, actor: string, scopes: readonly string[]): Channel {
    const ch = this.visibleChannel(ref, actor);
    if (ch.is_archived) throw new SlackApiError("is_archived");
    if (ch.members.has(actor)) return ch;
    if (scopes.includes("chat:write.public")) return ch;
    throw new SlackApiError("not_in_channel");
  }

  // ---------------------------------------------------------------- messages

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

  /** What a person (or the bot) can name in text: users, visible channels, user groups. */
  directory(viewer: string) {
    return {
      users: [...this.users.values()],
      channels: [...this.channels.values()].filter((c) => !c.is_private || c.members.has(viewer)),
      usergroups: [...this.usergroups.values()],
    };
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

  // ---------------------------------------------------------------- triggers and response URLs

  /** A fresh trigger_id for this user: usable once, within TRIGGER_TTL_MS. */
  issueTriggerId(user: string): string {
    const id = `${this.nowSec()}${Math.floor(Math.random() * 1000)}.${this.team.id.replace(/\D/g, "") || "1"}${Math.floor(Math.random() * 1e6)}.${randomHex(16)}`;
    this.triggers.set(id, { user, issuedAt: this.now(), used: false });
    return id;
  }

  consumeTrigger(id: string): string {
    const t = this.triggers.get(id);
    if (!t) throw new SlackApiError("invalid_trigger_id");
    if (t.used) throw new SlackApiError("exchanged_trigger_id");
    if (this.now() - t.issuedAt > TRIGGER_TTL_MS) throw new SlackApiError("expired_trigger_id");
    t.used = true;
    return t.user;
  }

  createResponseUrl(ctx: ResponseUrlContext): string {
    const id = `${this.team.id}/${randomHex(8)}/${randomHex(12)}`;
    this.responseUrls.set(id, { ...ctx, createdAt: this.now(), uses: 0 });
    return `${this.origin}/response/${id}`;
  }

  /**
   * A POST to a response_url, applied as Slack applies it. Returns the message or ephemeral
   * it produced. Errors: expired_url / used_url (unknown or spent), then the content errors.
   */
  respond(id: string, body: Json): Message | EphemeralMessage | undefined {
    const r = this.responseUrls.get(id);
    if (!r || this.now() - r.createdAt > RESPONSE_URL_TTL_MS) {
      throw new SlackApiError("expired_url");
    }
    if (r.uses >= RESPONSE_URL_MAX_USES) throw new SlackApiError("used_url");
    r.uses++;
    const ch = this.channels.get(r.channel);
    if (!ch) throw new SlackApiError("channel_not_found");
    const content: MessageContent = {
      text: typeof body.text === "string" ? body.text : undefined,
      blocks: Array.isArray(body.blocks) ? body.blocks : undefined,
      attachments: Array.isArray(body.attachments) ? body.attachments : undefined,
    };
    const truthy = (v: unknown) => v === true || v === "true";
    if (truthy(body.delete_original)) {
      if (r.messageTs === undefined) throw new SlackApiError("message_not_found");
      if (r.ephemeral) {
        const e = this.ephemerals.find((x) => x.ts === r.messageTs && x.user === r.user);
        if (!e) throw new SlackApiError("message_not_found");
        e.deleted = true;
        return e;
      }
      return this.deleteMessage(ch, r.messageTs, undefined);
    }
    if (truthy(body.replace_original)) {
      if (r.messageTs === undefined) throw new SlackApiError("message_not_found");
      if (r.ephemeral) {
        const e = this.ephemerals.find((x) => x.ts === r.messageTs && x.user === r.user);
        if (!e) throw new SlackApiError("message_not_found");
        this.checkContent(content, true);
        e.text = content.text ?? "";
        if (content.blocks !== undefined) e.blocks = withIds(content.blocks);
        else delete e.blocks;
        e.replaced = true;
        return e;
      }
      return this.updateMessage(ch, r.messageTs, undefined, content, "response_url");
    }
    const threadTs = typeof body.thread_ts === "string" ? body.thread_ts : r.threadTs;
    if (body.response_type === "in_channel") {
      // A response_url may post where the app is not a member: the user invoked it there.
      return this.postMessage(
        ch,
        this.app.botUserId,
        { ...content, thread_ts: threadTs },
        { via: "response_url" },
      );
    }
    return this.postEphemeral(ch, r.user, { ...content, thread_ts: threadTs }, "response_url");
  }

  // ---------------------------------------------------------------- views (views.ts)

  stack(user: string): ViewRecord[] {
    return views.stack(this, user);
  }

  topView(user: string): ViewRecord | undefined {
    return views.topView(this, user);
  }

  homeView(user: string): ViewRecord | undefined {
    return views.homeView(this, user);
  }

  openView(triggerId: string, input: unknown): ViewRecord {
    return views.openView(this, triggerId, input);
  }

  pushView(triggerId: string, input: unknown): ViewRecord {
    return views.pushView(this, triggerId, input);
  }

  updateView(ref: { view_id?: string; external_id?: string }, input: unknown, hash?: string) {
    return views.updateView(this, ref, input, hash);
  }

  publishView(user: string, input: unknown, hash?: string): ViewRecord {
    return views.publishView(this, user, input, hash);
  }

  closeView(user: string, viewId: string, all = false): ViewRecord[] {
    return views.closeView(this, user, viewId, all);
  }

  applyViewSubmissionResponse(user: string, viewId: string, body: unknown): ViewOutcome {
    return views.applyViewSubmissionResponse(this, user, viewId, body);
  }

  // ---------------------------------------------------------------- tokens and OAuth (oauth.ts)

  authenticate(token: string | undefined): TokenRecord {
    return oauth.authenticate(this, token);
  }

  revoke(token: string): void {
    oauth.revoke(this, token);
  }

  uninstall(): { bot: string[]; oauth: string[] } {
    return oauth.uninstall(this);
  }

  authorize(q: {
    clientId: string | undefined;
    scopes: readonly string[];
    userScopes: readonly string[];
    redirectUri: string | undefined;
    user?: string | undefined;
  }): string {
    return oauth.authorize(this, q);
  }

  exchange(a: {
    clientId: string | undefined;
    clientSecret: string | undefined;
    grantType: string | undefined;
    code: string | undefined;
    redirectUri: string | undefined;
    refreshToken: string | undefined;
  }): Json {
    return oauth.exchange(this, a);
  }

  exchangeLongLived(a: {
    clientId: string | undefined;
    clientSecret: string | undefined;
    token: TokenRecord;
  }): Json {
    return oauth.exchangeLongLived(this, a);
  }

  // ---------------------------------------------------------------- shapes Slack returns (shapes.ts)

  userJson(u: User, withEmail: boolean): Json {
    return shapes.userJson(this, u, withEmail);
  }

  channelJson(ch: Channel, viewer: string, withCount = false): Json {
    return shapes.channelJson(this, ch, viewer, withCount);
  }

  messageJson(m: Message): Json {
    return shapes.messageJson(this, m);
  }

  viewJson(rec: ViewRecord): Json {
    return shapes.viewJson(rec);
  }

  snapshot(): Json {
    return shapes.snapshot(this);
  }
}

/** A workspace without a server, for the playground page or unit tests. */
export function createWorkspace(seed?: WorkspaceSeed, opts?: WorkspaceOptions): Workspace {
  return new Workspace(seed, opts);
}
