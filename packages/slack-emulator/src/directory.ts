import { SlackApiError } from "./errors.ts";
import { formatTs, randomHex, slackId } from "./ids.ts";
import type { Channel, User, Usergroup, WorkspaceOptions } from "./model.ts";
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

/**
 * The workspace's directory: who and where (people, bots, channels, DMs, user groups), what a
 * caller may see of them, and the workspace clock. The ground floor the message store
 * (messages.ts) and the workspace (workspace.ts) stand on.
 */
export class Directory {
  readonly team: SeedTeam;
  /** the Enterprise organization the workspace belongs to (seed.enterprise) */
  readonly enterprise: SeedEnterprise | undefined;
  /** the app is installed org-wide (seed.orgInstall) */
  readonly orgInstall: boolean;
  readonly app: SeedApp;
  readonly users = new Map<string, User>();
  readonly channels = new Map<string, Channel>();
  readonly usergroups = new Map<string, Usergroup>();
  /** the deprecated verification token Slack still puts in every payload */
  readonly verificationToken = randomHex(12);
  readonly installerUserId: string;
  now: () => number;
  origin: string;

  private lastTsMicros = 0;

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

  /** What a person (or the bot) can name in text: users, visible channels, user groups. */
  directory(viewer: string) {
    return {
      users: [...this.users.values()],
      channels: [...this.channels.values()].filter((c) => !c.is_private || c.members.has(viewer)),
      usergroups: [...this.usergroups.values()],
    };
  }
}
