import { validateBlocks, validateView } from "./blockkit.ts";
import { argumentError, SlackApiError } from "./errors.ts";
import { formatTs, randomHex, slackId } from "./ids.ts";
import {
  ALL_BOT_SCOPES,
  DEFAULT_APP,
  DEFAULT_CHANNELS,
  DEFAULT_TEAM,
  DEFAULT_USERGROUPS,
  DEFAULT_USERS,
  type SeedApp,
  type SeedTeam,
  type WorkspaceSeed,
} from "./seed.ts";

/**
 * The emulated workspace: people, channels, messages, views, tokens. Pure state and rules,
 * no HTTP: the server (server.ts) turns Web API calls into these operations, and the
 * playground page can read the same objects. Rules break with SlackApiError carrying
 * Slack's own error names.
 */

export type Json = Record<string, unknown>;

export interface User {
  readonly id: string;
  readonly team_id: string;
  readonly name: string;
  readonly real_name: string;
  readonly tz: string;
  readonly email: string | undefined;
  readonly is_admin: boolean;
  readonly is_owner: boolean;
  readonly is_primary_owner: boolean;
  readonly is_bot: boolean;
  readonly title: string;
  readonly bot_id?: string;
  deleted: boolean;
}

export interface Message {
  type: "message";
  ts: string;
  user: string;
  team: string;
  text: string;
  bot_id?: string;
  app_id?: string;
  blocks?: unknown[];
  attachments?: unknown[];
  metadata?: unknown;
  thread_ts?: string;
  reply_count?: number;
  reply_users?: string[];
  reply_users_count?: number;
  latest_reply?: string;
  subtype?: string;
  edited?: { user: string; ts: string };
}

export interface Channel {
  readonly id: string;
  readonly name: string;
  readonly is_private: boolean;
  readonly is_im: boolean;
  readonly is_general: boolean;
  is_archived: boolean;
  readonly created: number;
  readonly creator: string;
  /** for a DM: the human on the other side */
  readonly user?: string;
  readonly members: Set<string>;
  topic: string;
  purpose: string;
  /** top-level messages and thread replies, in ts order */
  readonly messages: Message[];
  /** what chat.delete (or delete_original) removed, in deletion order */
  readonly deleted: Message[];
}

export interface EphemeralMessage {
  readonly channel: string;
  readonly user: string;
  readonly ts: string;
  text: string;
  blocks?: unknown[];
  attachments?: unknown[];
  readonly thread_ts?: string;
  /** how it arrived: the Web API, a response_url, or the body of a slash command's ack */
  readonly via: "chat.postEphemeral" | "response_url" | "command_ack";
  replaced: boolean;
  deleted: boolean;
}

export interface ScheduledMessage {
  readonly id: string;
  readonly channel: string;
  readonly post_at: number;
  readonly date_created: number;
  readonly text: string;
  readonly blocks?: unknown[];
  readonly attachments?: unknown[];
  readonly thread_ts?: string;
  readonly author: string;
}

export interface SlackView {
  id: string;
  team_id: string;
  type: "modal" | "home";
  title: unknown;
  close: unknown;
  submit: unknown;
  blocks: unknown[];
  private_metadata: string;
  callback_id: string;
  state: { values: Record<string, Record<string, Json>> };
  hash: string;
  clear_on_close: boolean;
  notify_on_close: boolean;
  root_view_id: string | null;
  previous_view_id: string | null;
  app_id: string;
  external_id: string;
  app_installed_team_id: string;
  bot_id: string;
}

export interface ViewRecord {
  readonly view: SlackView;
  readonly user: string;
  closed: boolean;
  /** the last `response_action: errors` the app sent for it, shown under the inputs */
  errors: Record<string, string> | undefined;
}

export interface TokenRecord {
  readonly token: string;
  readonly kind: "bot" | "user";
  /** the bot user for bot tokens, the installer for user tokens */
  readonly userId: string;
  readonly scopes: readonly string[];
  /** ms since the epoch (emulator clock); undefined: never */
  readonly expiresAt: number | undefined;
  readonly refreshToken: string | undefined;
  revoked: boolean;
}

export interface MessageContent {
  readonly text?: string | undefined;
  readonly blocks?: unknown[] | undefined;
  readonly attachments?: unknown[] | undefined;
}

export interface ResponseUrlContext {
  readonly channel: string;
  readonly user: string;
  /** the message the interaction came from, for replace_original / delete_original */
  readonly messageTs?: string | undefined;
  readonly ephemeral?: boolean | undefined;
  readonly threadTs?: string | undefined;
}

interface ResponseUrlRecord extends ResponseUrlContext {
  readonly createdAt: number;
  uses: number;
}

interface TriggerRecord {
  readonly user: string;
  readonly issuedAt: number;
  used: boolean;
}

interface AuthCode {
  readonly user: string;
  readonly scopes: readonly string[];
  readonly userScopes: readonly string[];
  readonly redirectUri: string | undefined;
  readonly createdAt: number;
  used: boolean;
}

export interface Usergroup {
  readonly id: string;
  readonly handle: string;
  readonly name: string;
  readonly description: string;
  readonly users: string[];
  readonly date_create: number;
}

export interface WorkspaceOptions {
  /** ms since the epoch; every time the workspace keeps comes from here */
  readonly now?: () => number;
  /** set by the server once it listens; response_url and permalinks are built from it */
  readonly origin?: string;
}

/** Slack's rules of time, in ms. */
export const TRIGGER_TTL_MS = 3_000;
export const RESPONSE_URL_TTL_MS = 30 * 60_000;
export const RESPONSE_URL_MAX_USES = 5;
export const AUTH_CODE_TTL_MS = 10 * 60_000;
export const SCHEDULE_HORIZON_SEC = 120 * 24 * 3600;
export const VIEW_STACK_LIMIT = 3;

const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

function tzInfo(tz: string, atMs: number): { offsetSec: number; label: string } {
  const offsetPart = new Intl.DateTimeFormat("en-US", { timeZone: tz, timeZoneName: "longOffset" })
    .formatToParts(atMs)
    .find((p) => p.type === "timeZoneName")?.value;
  const m = /GMT([+-])(\d{2}):(\d{2})/.exec(offsetPart ?? "");
  const offsetSec = m ? (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 3600 + Number(m[3]) * 60) : 0;
  const label =
    new Intl.DateTimeFormat("en-US", { timeZone: tz, timeZoneName: "long" })
      .formatToParts(atMs)
      .find((p) => p.type === "timeZoneName")?.value ?? tz;
  return { offsetSec, label };
}

/**
 * Slack stores blocks with a block_id on every block and an action_id on every interactive
 * element, generating the ones the app left out; payloads then carry those ids.
 */
export function withIds(blocks: readonly unknown[]): unknown[] {
  const short = () => randomHex(3);
  return blocks.map((b) => {
    if (!isObj(b)) return b;
    const out: Json = structuredClone(b);
    if (typeof out.block_id !== "string") out.block_id = short();
    const fill = (el: unknown) => {
      if (isObj(el) && el.type !== "image" && typeof el.action_id !== "string") {
        el.action_id = short();
      }
    };
    if (Array.isArray(out.elements) && out.type === "actions") out.elements.forEach(fill);
    if (out.accessory !== undefined) fill(out.accessory);
    if (out.element !== undefined) fill(out.element);
    return out;
  });
}

export class Workspace {
  readonly team: SeedTeam;
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
  readonly tokens = new Map<string, TokenRecord>();
  /** the deprecated verification token Slack still puts in every payload */
  readonly verificationToken = randomHex(12);
  readonly installerUserId: string;
  botToken: string;
  now: () => number;
  origin: string;
  /** when set, oauth.v2.access issues expiring tokens with refresh tokens (token rotation) */
  tokenRotation: { expiresInSec: number } | undefined;

  private lastTsMicros = 0;
  private readonly triggers = new Map<string, TriggerRecord>();
  private readonly responseUrls = new Map<string, ResponseUrlRecord>();
  private readonly authCodes = new Map<string, AuthCode>();
  private readonly refreshTokens = new Map<string, { userId: string; kind: "bot" | "user" }>();

  constructor(seed: WorkspaceSeed = {}, opts: WorkspaceOptions = {}) {
    this.now = opts.now ?? Date.now;
    this.origin = opts.origin ?? "http://127.0.0.1";
    this.team = seed.team ?? DEFAULT_TEAM;
    this.app = { ...DEFAULT_APP, ...seed.app };
    const createdSec = Math.floor(this.now() / 1000) - 86_400 * 30;
    const users = seed.users ?? DEFAULT_USERS;
    for (const u of users) {
      this.users.set(u.id, {
        id: u.id,
        team_id: this.team.id,
        name: u.name,
        real_name: u.real_name,
        tz: u.tz,
        email: u.email,
        is_admin: u.is_admin ?? u.is_owner ?? false,
        is_owner: u.is_owner ?? false,
        is_primary_owner: u.is_primary_owner ?? false,
        is_bot: false,
        title: u.title ?? "",
        deleted: false,
      });
    }
    this.users.set(this.app.botUserId, {
      id: this.app.botUserId,
      team_id: this.team.id,
      name: this.app.name,
      real_name: this.app.name,
      tz: "America/Los_Angeles",
      email: undefined,
      is_admin: false,
      is_owner: false,
      is_primary_owner: false,
      is_bot: true,
      title: "",
      bot_id: this.app.botId,
      deleted: false,
    });
    const owner = users.find((u) => u.is_primary_owner) ?? users.find((u) => u.is_owner);
    this.installerUserId = seed.installerUserId ?? owner?.id ?? users[0]?.id ?? this.app.botUserId;
    for (const c of seed.channels ?? DEFAULT_CHANNELS) {
      this.channels.set(c.id, {
        id: c.id,
        name: c.name,
        is_private: c.is_private ?? false,
        is_im: false,
        is_general: c.is_general ?? false,
        is_archived: c.is_archived ?? false,
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
      scopes: [...(seed.botScopes ?? ALL_BOT_SCOPES)],
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

  private newToken(prefix: "xoxb" | "xoxp"): string {
    const n = () => String(Math.floor(Math.random() * 9e12) + 1e12);
    return `${prefix}-${n()}-${n()}-${randomHex(12)}`;
  }

  // ---------------------------------------------------------------- people and places

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
    for (const c of this.channels.values()) if (c.is_im && c.user === userId) return c;
    const id = slackId("D", 10);
    const ch: Channel = {
      id,
      name: id,
      is_private: true,
      is_im: true,
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

  /** What a caller may see: private channels only for members (else channel_not_found). */
  visibleChannel(ref: string, actor: string): Channel {
    const ch = this.resolveChannel(ref);
    if (!ch || ((ch.is_private || ch.is_im) && !ch.members.has(actor))) {
      throw new SlackApiError("channel_not_found");
    }
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

  checkContent(content: MessageContent, requireSomething: boolean): void {
    const hasText = typeof content.text === "string" && content.text.length > 0;
    const hasBlocks = Array.isArray(content.blocks) && content.blocks.length > 0;
    const hasAttachments = Array.isArray(content.attachments) && content.attachments.length > 0;
    if (requireSomething && !hasText && !hasBlocks && !hasAttachments) {
      throw new SlackApiError("no_text");
    }
    if ((content.text?.length ?? 0) > 40_000) throw new SlackApiError("msg_too_long");
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
    },
  ): Message {
    this.checkContent(content, true);
    let parent: Message | undefined;
    if (content.thread_ts !== undefined) {
      parent = this.findMessage(ch, content.thread_ts);
      // Slack threads a reply-to-a-reply under the parent; an unknown ts is refused here
      // (Slack would post an orphan) so a wrong ts in the app shows up in tests.
      if (parent?.thread_ts !== undefined && parent.thread_ts !== parent.ts) {
        parent = this.findMessage(ch, parent.thread_ts);
      }
      if (!parent) throw new SlackApiError("thread_not_found");
    }
    const authorUser = this.users.get(author);
    const msg: Message = {
      type: "message",
      ts: this.nextTs(),
      user: author,
      team: this.team.id,
      text: content.text ?? "",
    };
    if (authorUser?.is_bot) {
      msg.bot_id = this.app.botId;
      msg.app_id = this.app.appId;
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
    return msg;
  }

  updateMessage(
    ch: Channel,
    ts: string,
    actor: string | undefined,
    content: MessageContent & { metadata?: unknown },
  ): Message {
    const msg = this.findMessage(ch, ts);
    if (!msg) throw new SlackApiError("message_not_found");
    if (actor !== undefined && msg.user !== actor) throw new SlackApiError("cant_update_message");
    this.checkContent(content, true);
    if (content.text !== undefined) msg.text = content.text;
    if (content.blocks !== undefined) msg.blocks = withIds(content.blocks);
    if (content.attachments !== undefined) msg.attachments = structuredClone(content.attachments);
    if (content.metadata !== undefined) msg.metadata = structuredClone(content.metadata);
    msg.edited = { user: msg.user, ts: this.nextTs() };
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
    if (!this.users.has(user)) throw new SlackApiError("user_not_found");
    if (!ch.members.has(user)) throw new SlackApiError("user_not_in_channel");
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
    const s: ScheduledMessage = {
      id: slackId("Q", 10),
      channel: ch.id,
      post_at: Math.floor(postAt),
      date_created: nowSec,
      text: content.text ?? "",
      author,
      ...(content.blocks !== undefined && { blocks: structuredClone(content.blocks) }),
      ...(content.attachments !== undefined && {
        attachments: structuredClone(content.attachments),
      }),
      ...(content.thread_ts !== undefined && { thread_ts: content.thread_ts }),
    };
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
      if (!ch) continue;
      try {
        posted.push(
          this.postMessage(ch, s.author, {
            text: s.text,
            blocks: s.blocks,
            attachments: s.attachments,
            thread_ts: s.thread_ts,
          }),
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
      return this.updateMessage(ch, r.messageTs, undefined, content);
    }
    const threadTs = typeof body.thread_ts === "string" ? body.thread_ts : r.threadTs;
    if (body.response_type === "in_channel") {
      // A response_url may post where the app is not a member: the user invoked it there.
      return this.postMessage(ch, this.app.botUserId, { ...content, thread_ts: threadTs });
    }
    return this.postEphemeral(ch, r.user, { ...content, thread_ts: threadTs }, "response_url");
  }

  // ---------------------------------------------------------------- views

  private checkView(input: unknown, want: "modal" | "home"): Json {
    const r = validateView(input);
    if (!r.ok) throw argumentError("invalid_arguments", r.messages);
    const v = input as Json;
    if (v.type !== want) {
      throw argumentError("invalid_arguments", [
        `[ERROR] must be ${want} [json-pointer:/view/type]`,
      ]);
    }
    if (JSON.stringify(v).length > 250_000) throw new SlackApiError("view_too_large");
    return v;
  }

  private checkExternalId(externalId: unknown, except?: string): void {
    if (typeof externalId !== "string" || externalId === "") return;
    for (const rec of this.views.values()) {
      if (!rec.closed && rec.view.external_id === externalId && rec.view.id !== except) {
        throw new SlackApiError("duplicate_external_id");
      }
    }
  }

  private makeView(
    input: Json,
    user: string,
    root: string | null,
    previous: string | null,
    keepId?: string,
  ): ViewRecord {
    const id = keepId ?? slackId("V", 10);
    const view: SlackView = {
      id,
      team_id: this.team.id,
      type: input.type as "modal" | "home",
      title: input.title ?? null,
      close: input.close ?? null,
      submit: input.submit ?? null,
      blocks: withIds((input.blocks as unknown[]) ?? []),
      private_metadata: typeof input.private_metadata === "string" ? input.private_metadata : "",
      callback_id: typeof input.callback_id === "string" ? input.callback_id : "",
      state: { values: {} },
      hash: `${this.nowSec()}.${randomHex(4)}`,
      clear_on_close: input.clear_on_close === true,
      notify_on_close: input.notify_on_close === true,
      root_view_id: root ?? id,
      previous_view_id: previous,
      app_id: this.app.appId,
      external_id: typeof input.external_id === "string" ? input.external_id : "",
      app_installed_team_id: this.team.id,
      bot_id: this.app.botId,
    };
    const rec: ViewRecord = { view, user, closed: false, errors: undefined };
    this.views.set(id, rec);
    return rec;
  }

  /** The open modals of a user, bottom first. */
  stack(user: string): ViewRecord[] {
    return (this.modalStacks.get(user) ?? []).flatMap((id) => {
      const rec = this.views.get(id);
      return rec ? [rec] : [];
    });
  }

  topView(user: string): ViewRecord | undefined {
    const s = this.stack(user);
    return s[s.length - 1];
  }

  homeView(user: string): ViewRecord | undefined {
    const id = this.homeViews.get(user);
    return id === undefined ? undefined : this.views.get(id);
  }

  openView(triggerId: string, input: unknown): ViewRecord {
    const v = this.checkView(input, "modal");
    const user = this.consumeTrigger(triggerId);
    this.checkExternalId(v.external_id);
    // A new modal replaces whatever the user had open.
    this.clearStack(user);
    const rec = this.makeView(v, user, null, null);
    this.modalStacks.set(user, [rec.view.id]);
    return rec;
  }

  pushView(triggerId: string, input: unknown): ViewRecord {
    const v = this.checkView(input, "modal");
    const user = this.consumeTrigger(triggerId);
    return this.pushFor(user, v);
  }

  private pushFor(user: string, v: Json): ViewRecord {
    const stack = this.modalStacks.get(user) ?? [];
    const top = stack[stack.length - 1];
    const root = stack[0];
    if (top === undefined || root === undefined) throw new SlackApiError("not_found");
    if (stack.length >= VIEW_STACK_LIMIT) throw new SlackApiError("push_limit_reached");
    this.checkExternalId(v.external_id);
    const rec = this.makeView(v, user, root, top);
    stack.push(rec.view.id);
    return rec;
  }

  updateView(ref: { view_id?: string; external_id?: string }, input: unknown, hash?: string) {
    let rec: ViewRecord | undefined;
    if (ref.view_id !== undefined) rec = this.views.get(ref.view_id);
    else if (ref.external_id !== undefined) {
      for (const r of this.views.values()) {
        if (!r.closed && r.view.external_id === ref.external_id) rec = r;
      }
    } else {
      throw argumentError("invalid_arguments", [
        "[ERROR] either view_id or external_id is required",
      ]);
    }
    if (!rec || rec.closed) throw new SlackApiError("not_found");
    if (hash !== undefined && hash !== "" && hash !== rec.view.hash) {
      throw new SlackApiError("hash_conflict");
    }
    const v = this.checkView(input, rec.view.type);
    this.checkExternalId(v.external_id, rec.view.id);
    return this.replaceView(rec, v);
  }

  /** Same id, new content and hash; input values survive for blocks whose block_id remains. */
  private replaceView(rec: ViewRecord, v: Json): ViewRecord {
    const old = rec.view;
    const fresh = this.makeView(v, rec.user, old.root_view_id, old.previous_view_id, old.id);
    const keep = new Set(
      fresh.view.blocks.flatMap((b) =>
        isObj(b) && typeof b.block_id === "string" ? [b.block_id] : [],
      ),
    );
    for (const [blockId, values] of Object.entries(old.state.values)) {
      if (keep.has(blockId)) fresh.view.state.values[blockId] = values;
    }
    return fresh;
  }

  publishView(user: string, input: unknown, hash?: string): ViewRecord {
    const u = this.users.get(user);
    if (!u || u.is_bot) throw new SlackApiError("user_not_found");
    const v = this.checkView(input, "home");
    const current = this.homeView(user);
    if (current && hash !== undefined && hash !== "" && hash !== current.view.hash) {
      throw new SlackApiError("hash_conflict");
    }
    this.checkExternalId(v.external_id, current?.view.id);
    const rec = current ? this.replaceView(current, v) : this.makeView(v, user, null, null);
    this.homeViews.set(user, rec.view.id);
    return rec;
  }

  private clearStack(user: string): ViewRecord[] {
    const closed = this.stack(user);
    for (const rec of closed) rec.closed = true;
    this.modalStacks.delete(user);
    return closed;
  }

  /**
   * The user closes the top modal (or all of them with clear_on_close / `all`).
   * Returns the views that closed, top first.
   */
  closeView(user: string, viewId: string, all = false): ViewRecord[] {
    const stack = this.modalStacks.get(user) ?? [];
    if (stack[stack.length - 1] !== viewId) {
      throw new Error(`view ${viewId} is not the top modal of ${user}; only that one can close`);
    }
    const top = this.views.get(viewId);
    if (all || top?.view.clear_on_close) return this.clearStack(user).reverse();
    stack.pop();
    if (top) top.closed = true;
    if (stack.length === 0) this.modalStacks.delete(user);
    return top ? [top] : [];
  }

  /**
   * What Slack does with the app's answer to a view_submission: nothing (close the view),
   * errors (show them), update, push, clear. Returns what happened, for tests and the page.
   */
  applyViewSubmissionResponse(user: string, viewId: string, body: unknown): ViewOutcome {
    const rec = this.views.get(viewId);
    if (!rec || rec.closed) return { action: "invalid", reason: "the view is no longer open" };
    if (body === undefined || body === "" || (isObj(body) && Object.keys(body).length === 0)) {
      this.closeView(user, viewId);
      return { action: "closed" };
    }
    if (!isObj(body)) return { action: "invalid", reason: "the response body is not JSON" };
    switch (body.response_action) {
      case "errors": {
        const errors = body.errors;
        if (!isObj(errors)) return { action: "invalid", reason: "errors must be an object" };
        const inputIds = new Set(
          rec.view.blocks.flatMap((b) =>
            isObj(b) && b.type === "input" && typeof b.block_id === "string" ? [b.block_id] : [],
          ),
        );
        const unknown = Object.keys(errors).filter((k) => !inputIds.has(k));
        if (unknown.length > 0) {
          return {
            action: "invalid",
            reason: `errors name blocks that are not inputs: ${unknown.join(", ")}`,
          };
        }
        rec.errors = Object.fromEntries(Object.entries(errors).map(([k, v]) => [k, String(v)]));
        return { action: "errors", errors: rec.errors };
      }
      case "update": {
        const r = validateView(body.view);
        if (!r.ok || !isObj(body.view) || body.view.type !== "modal") {
          return { action: "invalid", reason: "invalid view", messages: r.messages };
        }
        const next = this.replaceView(rec, body.view);
        return { action: "updated", view: next.view };
      }
      case "push": {
        const r = validateView(body.view);
        if (!r.ok || !isObj(body.view) || body.view.type !== "modal") {
          return { action: "invalid", reason: "invalid view", messages: r.messages };
        }
        try {
          const next = this.pushFor(user, body.view);
          return { action: "pushed", view: next.view };
        } catch (err) {
          if (err instanceof SlackApiError) return { action: "invalid", reason: err.code };
          throw err;
        }
      }
      case "clear":
        this.clearStack(user);
        return { action: "cleared" };
      default:
        return {
          action: "invalid",
          reason: `unknown response_action ${String(body.response_action)}`,
        };
    }
  }

  // ---------------------------------------------------------------- tokens and OAuth

  /** The token's record, or Slack's error: not_authed, invalid_auth, token_revoked, token_expired. */
  authenticate(token: string | undefined): TokenRecord {
    if (token === undefined || token === "") throw new SlackApiError("not_authed");
    const rec = this.tokens.get(token);
    if (!rec) throw new SlackApiError("invalid_auth");
    if (rec.revoked) throw new SlackApiError("token_revoked");
    if (rec.expiresAt !== undefined && this.now() >= rec.expiresAt) {
      throw new SlackApiError("token_expired");
    }
    return rec;
  }

  revoke(token: string): void {
    const rec = this.tokens.get(token);
    if (rec) rec.revoked = true;
  }

  /** The app is removed from the workspace: every token it holds stops working. */
  uninstall(): { bot: string[]; oauth: string[] } {
    const bot = new Set<string>();
    const oauth = new Set<string>();
    for (const rec of this.tokens.values()) {
      if (rec.revoked) continue;
      rec.revoked = true;
      (rec.kind === "bot" ? bot : oauth).add(rec.userId);
    }
    return { bot: [...bot], oauth: [...oauth] };
  }

  /** GET /oauth/v2/authorize, approved at once by `user` (default: the installer). */
  authorize(q: {
    clientId: string | undefined;
    scopes: readonly string[];
    userScopes: readonly string[];
    redirectUri: string | undefined;
    user?: string | undefined;
  }): string {
    if (q.clientId !== this.app.clientId) throw new SlackApiError("invalid_client_id");
    const user = q.user ?? this.installerUserId;
    if (!this.users.has(user)) throw new SlackApiError("user_not_found");
    const code = `${this.team.id.replace(/\D/g, "") || "1"}.${randomHex(16)}`;
    this.authCodes.set(code, {
      user,
      scopes: q.scopes,
      userScopes: q.userScopes,
      redirectUri: q.redirectUri,
      createdAt: this.now(),
      used: false,
    });
    return code;
  }

  private checkClient(clientId: string | undefined, clientSecret: string | undefined): void {
    if (clientId !== this.app.clientId) throw new SlackApiError("invalid_client_id");
    if (clientSecret !== this.app.clientSecret) throw new SlackApiError("bad_client_secret");
  }

  private issue(kind: "bot" | "user", userId: string, scopes: readonly string[]) {
    const rotation = this.tokenRotation;
    const base = this.newToken(kind === "bot" ? "xoxb" : "xoxp");
    const token = rotation ? `xoxe.${base}` : base;
    const refreshToken = rotation ? `xoxe-1-${randomHex(24)}` : undefined;
    const rec: TokenRecord = {
      token,
      kind,
      userId,
      scopes: [...scopes],
      expiresAt: rotation ? this.now() + rotation.expiresInSec * 1000 : undefined,
      refreshToken,
      revoked: false,
    };
    this.tokens.set(token, rec);
    if (refreshToken !== undefined) this.refreshTokens.set(refreshToken, { userId, kind });
    return rec;
  }

  private rotationFields(rec: TokenRecord): Json {
    if (rec.refreshToken === undefined || rec.expiresAt === undefined) return {};
    return {
      refresh_token: rec.refreshToken,
      expires_in: Math.round((rec.expiresAt - this.now()) / 1000),
    };
  }

  /** oauth.v2.access, both grants: authorization_code (the install) and refresh_token. */
  exchange(a: {
    clientId: string | undefined;
    clientSecret: string | undefined;
    grantType: string | undefined;
    code: string | undefined;
    redirectUri: string | undefined;
    refreshToken: string | undefined;
  }): Json {
    this.checkClient(a.clientId, a.clientSecret);
    const team = { id: this.team.id, name: this.team.name };
    const grant = a.grantType ?? "authorization_code";
    if (grant === "refresh_token") {
      const r = a.refreshToken === undefined ? undefined : this.refreshTokens.get(a.refreshToken);
      if (!r) throw new SlackApiError("invalid_refresh_token");
      const old = [...this.tokens.values()].find((t) => t.refreshToken === a.refreshToken);
      const scopes = old?.scopes ?? [];
      const rotation = this.tokenRotation ?? { expiresInSec: 43_200 };
      const token = `xoxe.${this.newToken(r.kind === "bot" ? "xoxb" : "xoxp")}`;
      const rec: TokenRecord = {
        token,
        kind: r.kind,
        userId: r.userId,
        scopes,
        expiresAt: this.now() + rotation.expiresInSec * 1000,
        refreshToken: a.refreshToken,
        revoked: false,
      };
      this.tokens.set(token, rec);
      return {
        app_id: this.app.appId,
        scope: scopes.join(","),
        token_type: r.kind,
        access_token: token,
        ...this.rotationFields(rec),
        ...(r.kind === "bot" ? { bot_user_id: this.app.botUserId } : { user_id: r.userId }),
        team,
        enterprise: null,
        is_enterprise_install: false,
      };
    }
    if (grant !== "authorization_code") throw new SlackApiError("invalid_grant_type");
    const c = a.code === undefined ? undefined : this.authCodes.get(a.code);
    if (!c || this.now() - c.createdAt > AUTH_CODE_TTL_MS) throw new SlackApiError("invalid_code");
    if (c.used) throw new SlackApiError("code_already_used");
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
      const u = this.issue("user", c.user, c.userScopes);
      Object.assign(authedUser, {
        scope: c.userScopes.join(","),
        access_token: u.token,
        token_type: "user",
        ...this.rotationFields(u),
      });
    }
    const out: Json = {
      app_id: this.app.appId,
      authed_user: authedUser,
      team,
      enterprise: null,
      is_enterprise_install: false,
    };
    if (c.scopes.length > 0) {
      const bot = this.issue("bot", this.app.botUserId, c.scopes);
      Object.assign(out, {
        scope: c.scopes.join(","),
        token_type: "bot",
        access_token: bot.token,
        bot_user_id: this.app.botUserId,
        ...this.rotationFields(bot),
      });
    }
    // Installing adds the bot user back to the workspace if an uninstall had removed it.
    const botUser = this.users.get(this.app.botUserId);
    if (botUser) botUser.deleted = false;
    return out;
  }

  // ---------------------------------------------------------------- shapes Slack returns

  userJson(u: User, withEmail: boolean): Json {
    const { offsetSec, label } = tzInfo(u.tz, this.now());
    const profile: Json = {
      title: u.title,
      phone: "",
      skype: "",
      real_name: u.real_name,
      real_name_normalized: u.real_name,
      display_name: u.name,
      display_name_normalized: u.name,
      status_text: "",
      status_emoji: "",
      avatar_hash: "g0000000000",
      image_24: `https://a.slack-edge.example/${u.id}_24.png`,
      image_48: `https://a.slack-edge.example/${u.id}_48.png`,
      image_72: `https://a.slack-edge.example/${u.id}_72.png`,
      team: this.team.id,
    };
    if (withEmail && u.email !== undefined) profile.email = u.email;
    if (u.bot_id !== undefined) {
      profile.bot_id = u.bot_id;
      profile.api_app_id = this.app.appId;
    }
    return {
      id: u.id,
      team_id: u.team_id,
      name: u.name,
      deleted: u.deleted,
      color: "9f69e7",
      real_name: u.real_name,
      tz: u.tz,
      tz_label: label,
      tz_offset: offsetSec,
      profile,
      is_admin: u.is_admin,
      is_owner: u.is_owner,
      is_primary_owner: u.is_primary_owner,
      is_restricted: false,
      is_ultra_restricted: false,
      is_bot: u.is_bot,
      is_app_user: false,
      updated: this.nowSec(),
      is_email_confirmed: !u.is_bot,
    };
  }

  channelJson(ch: Channel, viewer: string, withCount = false): Json {
    if (ch.is_im) {
      return {
        id: ch.id,
        created: ch.created,
        is_im: true,
        is_org_shared: false,
        user: ch.user,
        is_user_deleted: false,
        priority: 0,
      };
    }
    const out: Json = {
      id: ch.id,
      name: ch.name,
      is_channel: !ch.is_private,
      is_group: ch.is_private,
      is_im: false,
      is_mpim: false,
      is_private: ch.is_private,
      created: ch.created,
      is_archived: ch.is_archived,
      is_general: ch.is_general,
      unlinked: 0,
      name_normalized: ch.name,
      is_shared: false,
      is_org_shared: false,
      is_ext_shared: false,
      is_pending_ext_shared: false,
      pending_shared: [],
      context_team_id: this.team.id,
      shared_team_ids: [this.team.id],
      parent_conversation: null,
      creator: ch.creator,
      is_member: ch.members.has(viewer),
      topic: { value: ch.topic, creator: ch.creator, last_set: ch.created },
      purpose: { value: ch.purpose, creator: ch.creator, last_set: ch.created },
      previous_names: [],
    };
    if (withCount) out.num_members = ch.members.size;
    return out;
  }

  messageJson(m: Message): Json {
    const out: Json = structuredClone(m) as unknown as Json;
    if (m.bot_id !== undefined) {
      out.bot_profile = {
        id: this.app.botId,
        app_id: this.app.appId,
        name: this.app.name,
        deleted: false,
        team_id: this.team.id,
      };
    }
    return out;
  }

  viewJson(rec: ViewRecord): Json {
    return structuredClone(rec.view) as unknown as Json;
  }

  /** Everything a page (or a test) may want to show, as plain JSON. Tokens are left out. */
  snapshot(): Json {
    return {
      team: this.team,
      app: { appId: this.app.appId, botId: this.app.botId, botUserId: this.app.botUserId },
      users: [...this.users.values()].map((u) => this.userJson(u, true)),
      channels: [...this.channels.values()].map((c) => ({
        ...this.channelJson(c, this.app.botUserId, true),
        members: [...c.members],
        messages: c.messages.map((m) => this.messageJson(m)),
      })),
      usergroups: [...this.usergroups.values()],
      ephemerals: this.ephemeralsFor(),
      scheduled: [...this.scheduled.values()],
      modals: Object.fromEntries(
        [...this.modalStacks.keys()].map((u) => [u, this.stack(u).map((r) => this.viewJson(r))]),
      ),
      homes: Object.fromEntries(
        [...this.homeViews.entries()].flatMap(([u, id]) => {
          const rec = this.views.get(id);
          return rec ? [[u, this.viewJson(rec)]] : [];
        }),
      ),
    };
  }
}

export type ViewOutcome =
  | { action: "closed" }
  | { action: "cleared" }
  | { action: "errors"; errors: Record<string, string> }
  | { action: "updated"; view: SlackView }
  | { action: "pushed"; view: SlackView }
  | { action: "invalid"; reason: string; messages?: readonly string[] };

/** A workspace without a server, for the playground page or unit tests. */
export function createWorkspace(seed?: WorkspaceSeed, opts?: WorkspaceOptions): Workspace {
  return new Workspace(seed, opts);
}
