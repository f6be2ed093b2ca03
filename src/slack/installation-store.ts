import type { Installation, InstallationQuery, InstallationStore } from "@slack/bolt";
import { WebClient } from "@slack/web-api";
import type { Logger } from "../log.ts";
import { slackErrorName } from "../slack-errors.ts";
import type { Store } from "../store/index.ts";
import { installationOwner } from "../store/index.ts";
import { quietLogger } from "./directory.ts";
import { forBolt, marginSec, type Stored } from "./installation-record.ts";
import { ORG_TEAM_PREFIX } from "./org-workspaces.ts";

export { singleFlightAuthorize } from "./single-flight.ts";

/**
 * Bolt's installation store on our store: `install:{team or enterprise}`, tokens (and, with token
 * rotation, refresh tokens) encrypted. Bolt hands over the whole installation, refreshed tokens
 * included, and it is kept whole.
 *
 * Token rotation lives here, not in Bolt's InstallProvider: Bolt refreshes only when a request
 * comes in, within a fixed two hours of expiry, and with no claim, so two instances refreshing at
 * once fork the token (slackapi/node-slack-sdk#2504). Here a refresh is due in the last quarter
 * of a token's life (at most two hours), one instance at a time per installation holds a claim in
 * the shared store while it refreshes, the others keep using the still valid token, and a
 * schedule refreshes tokens nobody asked for (the live engine posts for hours with no request).
 * The installation handed to Bolt carries no refresh token, so Bolt never refreshes on its own.
 */

/** Held (with the instance's id) by the one instance refreshing an installation's token. */
const CLAIM_PREFIX = "rotate:";
const CLAIM_MS = 15_000;
/**
 * How long a caller whose token already expired waits for another instance's refresh (a
 * request waits for it before its ack, within Slack's 3 s).
 */
const WAIT_FOR_PEER_MS = 2_000;
/** How long after Slack said rotation is off a long-lived token is offered for exchange again. */
const EXCHANGE_RETRY_MS = 86_400_000;
/** Slack's answers meaning the refresh token is dead: only a reinstall brings the app back. */
const REFUSED = new Set(["invalid_refresh_token", "token_revoked", "invalid_grant_type"]);

export interface RotationOptions {
  clientId: string;
  clientSecret: string;
  apiUrl: string | undefined;
  /** This instance's id, held in the claim. */
  instanceId: string;
  logger: Logger;
  now?: () => number;
  /** Called once, by the instance whose refresh Slack refused, while the old token still works. */
  onRefused?: (owner: string, botToken: string) => Promise<void>;
}

export interface RotatingInstallationStore extends InstallationStore {
  /** The bot token for a workspace (through its org-wide installation when it has one). */
  botToken(team: string): Promise<string | undefined>;
  /** Remembers that a workspace is served by an org-wide installation. */
  rememberOrgWorkspace(team: string, enterprise: string): Promise<void>;
  /** The org whose installation serves a workspace, as remembered. */
  orgOf(team: string): Promise<string | undefined>;
  /** Whether a workspace (or its org) has an installation that can still post. */
  hasInstallation(team: string): Promise<boolean>;
  /** Refreshes what is due and moves long-lived tokens over; ms until the next call is useful. */
  sweep(): Promise<number>;
  /**
   * Called with the ms until a token seen in use is due for its refresh, so the schedule wakes
   * for it (an install, or another instance's refresh, happened since the last sweep).
   */
  onDue: ((inMs: number) => void) | undefined;
}

export function createInstallationStore(
  store: Store,
  rotation?: RotationOptions,
): RotatingInstallationStore {
  const now = rotation?.now ?? Date.now;
  const nowSec = () => Math.floor(now() / 1000);
  /** workspace → its org and when that was last written to the store (rewritten now and then) */
  const orgOf = new Map<string, { org: string; at: number }>();
  const inflight = new Map<string, Promise<Stored | undefined>>();
  const client = rotation
    ? new WebClient(undefined, {
        ...(rotation.apiUrl ? { slackApiUrl: rotation.apiUrl } : {}),
        retryConfig: { retries: 1, factor: 1.5, minTimeout: 100, maxTimeout: 500 },
        timeout: 5_000,
        // Only warnings and errors, never a request's arguments (a refresh token).
        logger: quietLogger(rotation.logger),
      })
    : undefined;

  const ownerOf = (q: InstallationQuery<boolean>): string => {
    const id = q.isEnterpriseInstall ? q.enterpriseId : q.teamId;
    if (!id) throw new Error("installation query names neither a team nor an enterprise");
    return id;
  };

  /** The owner whose installation serves a workspace: its own, else its org's. */
  async function ownerServing(team: string): Promise<string | undefined> {
    if (await store.installations.get(team)) return team;
    const org = (await store.get<string>(`${ORG_TEAM_PREFIX}${team}`)) ?? orgOf.get(team)?.org;
    if (org && (await store.installations.get(org))) return org;
    return undefined;
  }

  /** Gives the claim back, only while it is still ours (compare-and-set: it lapses at once). */
  async function releaseClaim(owner: string): Promise<void> {
    await store.update<string>(`${CLAIM_PREFIX}${owner}`, (holder) =>
      holder === rotation?.instanceId ? { value: "released", ttlMs: 1 } : undefined,
    );
  }

  /** One refresh of the owner's bot token, under the store-wide claim; undefined: not ours. */
  async function refresh(
    owner: string,
    grant: "refresh" | "exchange",
  ): Promise<Stored | undefined> {
    if (!rotation || !client) return undefined;
    const running = inflight.get(owner);
    if (running) return running;
    const p = (async () => {
      if (!(await store.claimOnce(`${CLAIM_PREFIX}${owner}`, CLAIM_MS, rotation.instanceId))) {
        return undefined;
      }
      try {
        // Read after the claim: a peer that refreshed just before has stored its token by now.
        const cur = (await store.installations.get(owner)) as Stored | undefined;
        if (!cur?.bot || cur.rotationRefusedAt !== undefined) return cur;
        if (grant === "refresh") {
          if (!cur.bot.refreshToken || cur.bot.expiresAt === undefined) return cur;
          if (cur.bot.expiresAt - nowSec() > marginSec(cur)) return cur;
        } else if (cur.bot.refreshToken) {
          return cur;
        }
        let res: Awaited<ReturnType<WebClient["oauth"]["v2"]["access"]>>;
        try {
          res =
            grant === "refresh"
              ? await client.oauth.v2.access({
                  client_id: rotation.clientId,
                  client_secret: rotation.clientSecret,
                  grant_type: "refresh_token",
                  refresh_token: cur.bot.refreshToken as string,
                })
              : await client.oauth.v2.exchange({
                  token: cur.bot.token,
                  client_id: rotation.clientId,
                  client_secret: rotation.clientSecret,
                });
        } catch (err) {
          const name = slackErrorName(err);
          if (grant === "exchange" && name === "token_rotation_not_enabled") {
            const marked: Stored = { ...cur, rotationExchangeRefusedAt: now() };
            await store.installations.put(owner, marked);
            rotation.logger.info(
              { owner },
              "Slack has token rotation off for this app; the long-lived token stays (asked again in a day)",
            );
            return marked;
          }
          if (grant === "refresh" && name !== undefined && REFUSED.has(name)) {
            await store.installations.put(owner, { ...cur, rotationRefusedAt: now() } as Stored);
            rotation.logger.warn(
              { owner, error: name },
              "Slack refused to refresh the bot token; the app stops posting there until it is reinstalled",
            );
            await rotation
              .onRefused?.(owner, cur.bot.token)
              .catch((e: unknown) =>
                rotation.logger.warn(
                  { err: e, owner },
                  "the admins were not told of the refused refresh",
                ),
              );
            return undefined;
          }
          throw err;
        }
        const lifetime = Number(res.expires_in);
        if (!res.access_token || !res.refresh_token || !Number.isFinite(lifetime)) {
          throw new Error(
            `${grant === "refresh" ? "oauth.v2.access" : "oauth.v2.exchange"} gave no rotating token`,
          );
        }
        const next: Stored = {
          ...cur,
          bot: {
            ...cur.bot,
            token: res.access_token,
            refreshToken: res.refresh_token,
            expiresAt: nowSec() + lifetime,
          },
          rotationLifetimeSec: lifetime,
        };
        delete next.rotationExchangeRefusedAt;
        await store.installations.put(owner, next);
        rotation.logger.info(
          { owner, expiresInSec: lifetime, grant },
          grant === "refresh" ? "refreshed the bot token" : "moved the bot token over to rotation",
        );
        return next;
      } finally {
        await releaseClaim(owner).catch(() => undefined);
      }
    })().finally(() => inflight.delete(owner));
    inflight.set(owner, p);
    return p;
  }

  /** Refreshes that failed (Slack or the store in trouble): not tried again before `until`. */
  const failures = new Map<string, { until: number; waitMs: number }>();
  const dueIn = (inst: Stored): number | undefined => {
    const bot = inst.bot;
    if (!rotation || !bot || inst.rotationRefusedAt !== undefined) return undefined;
    if (!bot.refreshToken) {
      // A long-lived token: moved over now, or a day after Slack last said rotation is off.
      const triedAt = inst.rotationExchangeRefusedAt ?? 0;
      const failedAt = failures.get(installationOwner(inst))?.until ?? 0;
      return Math.max(100, triedAt + EXCHANGE_RETRY_MS - now(), failedAt - now());
    }
    if (bot.expiresAt === undefined) return undefined;
    const failed = failures.get(installationOwner(inst))?.until ?? 0;
    return Math.max(100, (bot.expiresAt - marginSec(inst)) * 1000 - now(), failed - now());
  };
  const tellDue = (inst: Stored | undefined) => {
    const ms = inst ? dueIn(inst) : undefined;
    if (ms !== undefined) self.onDue?.(ms);
  };

  /**
   * The installation with a token that works now, refreshing it first when due. After a refused
   * refresh nothing more is posted there; `interactive` requests are still served while the old
   * token lasts, so an admin opening App Home reads what to do.
   */
  async function fresh(
    owner: string,
    inst: Stored,
    interactive = false,
  ): Promise<Stored | undefined> {
    if (inst.rotationRefusedAt !== undefined) {
      return interactive && (inst.bot?.expiresAt ?? 0) > nowSec() ? inst : undefined;
    }
    const bot = inst.bot;
    if (!rotation || !bot?.refreshToken || bot.expiresAt === undefined) {
      tellDue(inst);
      return inst;
    }
    const left = bot.expiresAt - nowSec();
    if (left > marginSec(inst)) {
      tellDue(inst);
      return inst;
    }
    if (left > 0 && (failures.get(owner)?.until ?? 0) > now()) return inst;
    let mine: Stored | undefined;
    try {
      mine = await refresh(owner, "refresh");
    } catch (err) {
      // Slack or the store in trouble: the token still works until it expires; the schedule
      // tries again soon.
      const wait = Math.min(30_000, (failures.get(owner)?.waitMs ?? 500) * 2);
      failures.set(owner, { until: now() + wait, waitMs: wait });
      if (left <= 0) throw err;
      rotation.logger.warn({ err, owner }, "rotation: the refresh failed; the token still works");
      self.onDue?.(wait);
      return inst;
    }
    if (mine) {
      failures.delete(owner);
      return mine.rotationRefusedAt === undefined ? mine : undefined;
    }
    const cur = ((await store.installations.get(owner)) as Stored | undefined) ?? inst;
    if (cur.rotationRefusedAt !== undefined) return undefined;
    // A peer holds the claim: its token still works until it expires; past that, wait for it.
    if ((cur.bot?.expiresAt ?? 0) > nowSec()) return cur;
    const until = now() + WAIT_FOR_PEER_MS;
    while (now() < until) {
      await new Promise((r) => setTimeout(r, 100));
      const again = (await store.installations.get(owner)) as Stored | undefined;
      if (!again || again.rotationRefusedAt !== undefined) return undefined;
      if ((again.bot?.expiresAt ?? 0) > nowSec()) return again;
    }
    return undefined;
  }

  const self: RotatingInstallationStore = {
    onDue: undefined,
    async storeInstallation(installation: Installation) {
      const inst: Stored = { ...installation };
      const expiresAt = inst.bot?.expiresAt;
      if (expiresAt !== undefined) inst.rotationLifetimeSec = Math.max(1, expiresAt - nowSec());
      await store.installations.put(installationOwner(inst), inst);
      tellDue(inst);
    },
    async fetchInstallation(query) {
      let owner = ownerOf(query);
      let found = (await store.installations.get(owner)) as Stored | undefined;
      if (!found && !query.isEnterpriseInstall && query.teamId) {
        const serving = await ownerServing(query.teamId);
        if (serving) {
          owner = serving;
          found = (await store.installations.get(owner)) as Stored | undefined;
        }
      }
      if (!found) throw new Error(`no installation for ${owner}`);
      const usable = await fresh(owner, found, true);
      if (!usable) throw new Error(`no working token for ${owner}`);
      return forBolt(usable);
    },
    async deleteInstallation(query) {
      await store.installations.delete(ownerOf(query));
    },
    async botToken(team) {
      const owner = await ownerServing(team);
      if (!owner) return undefined;
      const inst = (await store.installations.get(owner)) as Stored | undefined;
      if (!inst) return undefined;
      return (await fresh(owner, inst))?.bot?.token;
    },
    async rememberOrgWorkspace(team, enterprise) {
      if (team === enterprise) return;
      // Written again every few minutes: an uninstall (anywhere) and a reinstall are followed.
      const known = orgOf.get(team);
      if (known?.org === enterprise && now() - known.at < 5 * 60_000) return;
      await store.set(`${ORG_TEAM_PREFIX}${team}`, enterprise);
      if (orgOf.size > 10_000) orgOf.clear();
      orgOf.set(team, { org: enterprise, at: now() });
    },
    async orgOf(team) {
      return orgOf.get(team)?.org ?? (await store.get<string>(`${ORG_TEAM_PREFIX}${team}`));
    },
    async hasInstallation(team) {
      return (await ownerServing(team)) !== undefined;
    },
    async sweep() {
      let next = 60_000;
      if (!rotation) return next;
      for (const key of await store.keys("install:")) {
        const owner = key.slice("install:".length);
        let inst: Stored | undefined;
        try {
          inst = (await store.installations.get(owner)) as Stored | undefined;
        } catch (err) {
          rotation.logger.warn({ err, owner }, "rotation: an installation could not be read");
          continue;
        }
        if (!inst?.bot || inst.rotationRefusedAt !== undefined) continue;
        try {
          if (!inst.bot.refreshToken) {
            // A long-lived token from before rotation: moved over once Slack allows it (a day
            // between tries when it does not).
            const triedAt = inst.rotationExchangeRefusedAt;
            const failedUntil = failures.get(owner)?.until ?? 0;
            if (
              (triedAt === undefined || now() - triedAt >= EXCHANGE_RETRY_MS) &&
              failedUntil <= now()
            ) {
              inst = (await refresh(owner, "exchange")) ?? inst;
              failures.delete(owner);
            }
          } else {
            inst = (await fresh(owner, inst)) ?? inst;
          }
        } catch (err) {
          const wait = Math.min(30_000, (failures.get(owner)?.waitMs ?? 500) * 2);
          failures.set(owner, { until: now() + wait, waitMs: wait });
          rotation.logger.warn(
            { err, owner },
            "rotation: the token was not refreshed; tried again soon",
          );
          next = Math.min(next, wait);
          continue;
        }
        const due = dueIn(inst);
        if (due !== undefined) next = Math.min(next, due);
      }
      return next;
    },
  };
  return self;
}
