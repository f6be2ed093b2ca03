import { LogLevel, WebClient } from "@slack/web-api";
import type { UsergroupChoice } from "../blocks/settings.ts";
import type { Directory, SlackProfile } from "../domain/directory.ts";
import { USER_ERROR_CODES, UserFacingError } from "../domain/errors.ts";
import type { Logger } from "../log.ts";
import { isRateLimited, retryAfterMs, slackErrorName } from "../slack-errors.ts";

/**
 * The domain's Directory over Slack's Web API, with caches. Lookups go through a client of their
 * own per workspace that never queues behind a 429 (Bolt's interactive client pauses its whole
 * queue for Retry-After, so one throttled `usergroups.users.list`, a tier-2 method, could push a
 * `views.open` past its 3-second trigger). A throttled lookup answers from a stale cache entry
 * when there is one under STALE_MS old, and otherwise refuses in plain words.
 */

const PROFILE_MS = 60_000;
const GROUP_MS = 5 * 60_000;
const EMAIL_MS = 5 * 60_000;
const MEMBER_MS = 60_000;
const MAX_ENTRIES = 5_000;
/**
 * How old an entry may be to answer for a throttled lookup. Profiles, group members and channel
 * membership decide who may do what (admin rights, a group policy, posting in a channel): an
 * answer from before a demotion must not outlive a short throttle.
 */
const STALE_MS = 10 * 60_000;

interface Entry<T> {
  value: T;
  at: number;
}

class TtlCache<T> {
  private readonly map = new Map<string, Entry<T>>();
  constructor(private readonly ttlMs: number) {}

  fresh(key: string, now: number): T | undefined {
    const e = this.map.get(key);
    return e && now - e.at < this.ttlMs ? e.value : undefined;
  }

  /** An expired entry, while younger than `maxAgeMs` (by default any age). */
  stale(key: string, now = 0, maxAgeMs = Number.POSITIVE_INFINITY): T | undefined {
    const e = this.map.get(key);
    return e && now - e.at < maxAgeMs ? e.value : undefined;
  }

  set(key: string, value: T, now: number): void {
    if (this.map.size >= MAX_ENTRIES) this.map.clear();
    this.map.set(key, { value, at: now });
  }
}

function busy(err: unknown): UserFacingError {
  const s = Math.ceil((retryAfterMs(err) ?? 1_000) / 1000);
  return new UserFacingError(
    USER_ERROR_CODES.busy,
    `Slack is asking On Air to slow down. Please try again in ${s} second${s === 1 ? "" : "s"}.`,
    { cause: err },
  );
}

/** Caches shared by every request of one app instance, per workspace. */
export class DirectoryCaches {
  private readonly profiles = new TtlCache<SlackProfile>(PROFILE_MS);
  private readonly groups = new TtlCache<readonly string[]>(GROUP_MS);
  private readonly emails = new TtlCache<string | null>(EMAIL_MS);
  private readonly members = new TtlCache<boolean>(MEMBER_MS);
  private readonly usergroupLists = new TtlCache<UsergroupChoice[]>(GROUP_MS);
  private readonly clients = new Map<string, WebClient>();

  constructor(
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
    /** Counts calls by method and outcome (the app's metrics). */
    private readonly fetch?: typeof globalThis.fetch,
  ) {}

  /** A lookup client for this token: no retries, 429s rejected at once (never a paused queue). */
  private lookupClient(client: WebClient): WebClient {
    const token = client.token ?? "";
    let c = this.clients.get(token);
    if (!c) {
      if (this.clients.size > 1_000) this.clients.clear();
      c = new WebClient(token, {
        slackApiUrl: client.slackApiUrl,
        rejectRateLimitedCalls: true,
        retryConfig: { retries: 0 },
        logger: quietLogger(this.logger),
        ...(this.fetch ? { fetch: this.fetch } : {}),
      });
      this.clients.set(token, c);
    }
    return c;
  }

  /**
   * The workspace's user groups for the settings form (tier 2, so cached): never more than
   * `budgetMs` of the modal's 3-second trigger; slow or throttled, the form shows what the cache
   * holds, or no groups.
   */
  async usergroups(team: string, client: WebClient, budgetMs: number): Promise<UsergroupChoice[]> {
    const now = this.now();
    const hit = this.usergroupLists.fresh(team, now);
    if (hit) return hit;
    const web = this.lookupClient(client);
    let timer: NodeJS.Timeout | undefined;
    try {
      const res = await Promise.race([
        web.usergroups.list({}),
        new Promise<undefined>((resolve) => {
          timer = setTimeout(() => resolve(undefined), budgetMs);
        }),
      ]);
      if (!res) {
        this.logger.warn("usergroups.list was too slow; the settings form shows the cached groups");
        return this.usergroupLists.stale(team) ?? [];
      }
      const groups = (res.usergroups ?? []).flatMap((g) =>
        g.id && g.handle && !g.date_delete
          ? [{ id: g.id, handle: g.handle, name: g.name ?? g.handle }]
          : [],
      );
      this.usergroupLists.set(team, groups, this.now());
      return groups;
    } catch (err) {
      this.logger.warn(
        { err },
        "usergroups.list failed; the settings form shows the cached groups",
      );
      return this.usergroupLists.stale(team) ?? [];
    } finally {
      clearTimeout(timer);
    }
  }

  /** The directory for one request: Slack's client for its workspace. */
  for(team: string, client: WebClient): Directory {
    const web = this.lookupClient(client);
    const key = (k: string) => `${team}:${k}`;
    const cached = async <T>(cache: TtlCache<T>, k: string, load: () => Promise<T>): Promise<T> => {
      const now = this.now();
      const hit = cache.fresh(key(k), now);
      if (hit !== undefined) return hit;
      try {
        const value = await load();
        cache.set(key(k), value, this.now());
        return value;
      } catch (err) {
        const stale = cache.stale(key(k), this.now(), STALE_MS);
        if (isRateLimited(err)) {
          if (stale !== undefined) return stale;
          throw busy(err);
        }
        throw err;
      }
    };
    return {
      profile: (user) =>
        cached(this.profiles, `u:${user}`, async () => {
          const res = await web.users.info({ user });
          const u = res.user;
          // Slack's admin flags are the person's own workspace's: a person from another
          // organization in a shared channel is no admin here.
          const ours = !u?.team_id || u.team_id === team;
          const isGuest = Boolean(u?.is_restricted || u?.is_ultra_restricted);
          return {
            id: user,
            email: u?.profile?.email,
            tz: u?.tz,
            isAdmin: ours && !isGuest && Boolean(u?.is_admin || u?.is_owner || u?.is_primary_owner),
            isGuest,
            name: u?.real_name || u?.profile?.display_name || u?.name || user,
          };
        }),
      groupMembers: (usergroup) =>
        cached(this.groups, `g:${usergroup}`, async () => {
          const res = await web.usergroups.users.list({ usergroup });
          return res.users ?? [];
        }),
      userByEmail: async (email) =>
        (await cached(this.emails, `e:${email.toLowerCase()}`, async () => {
          try {
            const res = await web.users.lookupByEmail({ email });
            return res.user?.id ?? null;
          } catch (err) {
            // users_not_found is Slack's answer for an address outside the workspace.
            if (slackErrorName(err) === "users_not_found") return null;
            throw err;
          }
        })) ?? undefined,
      appReach: async (channel) => {
        try {
          const res = await web.conversations.info({ channel });
          return res.channel?.is_archived ? "archived" : "ok";
        } catch (err) {
          if (slackErrorName(err) === "channel_not_found") return "hidden";
          if (isRateLimited(err)) throw busy(err);
          throw err;
        }
      },
      isChannelMember: (channel, user) =>
        cached(this.members, `m:${channel}:${user}`, async () => {
          let cursor: string | undefined;
          for (let page = 0; page < 50; page++) {
            let res: Awaited<ReturnType<WebClient["conversations"]["members"]>>;
            try {
              res = await web.conversations.members({
                channel,
                limit: 1000,
                ...(cursor ? { cursor } : {}),
              });
            } catch (err) {
              // A private channel the app is not in, or no such channel: not provably a member.
              const name = slackErrorName(err);
              if (name === "channel_not_found" || name === "method_not_supported_for_channel_type")
                return false;
              throw err;
            }
            if ((res.members ?? []).includes(user)) return true;
            cursor = res.response_metadata?.next_cursor || undefined;
            if (!cursor) return false;
          }
          return false;
        }),
    };
  }
}

/** WebClient logs request bodies at debug; lookups keep only warnings and errors. */
export function quietLogger(logger: Logger) {
  const log = logger.child({ component: "slack-lookup" });
  return {
    debug: () => {},
    info: () => {},
    warn: (...msg: unknown[]) => log.warn(msg.map(String).join(" ")),
    error: (...msg: unknown[]) => log.error(msg.map(String).join(" ")),
    setLevel: () => {},
    getLevel: () => LogLevel.WARN,
    setName: () => {},
  };
}
