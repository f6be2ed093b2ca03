import type { WebClient } from "@slack/web-api";
import { buildHome } from "../blocks/home.ts";
import type { Deps } from "../deps.ts";
import type { Actor } from "../domain/directory.ts";
import { homeData } from "../domain/home.ts";
import type { Logger } from "../log.ts";
import { rotationRefusedFor } from "./org-workspaces.ts";

/**
 * What admins are told, once by DM and on App Home while it lasts, when Slack refuses to renew
 * the app's token (its refresh token revoked or no longer valid).
 */
export const ROTATION_REFUSED_TEXT =
  ":warning: Slack refused to renew On Air's access to this workspace, so On Air has stopped posting here (live cards, digests, reminders). A workspace admin can bring it back by installing On Air again from its install page (`/slack/install` on the app's address); then `/onair notify` with an event and a channel brings its live card back there.";

/** Publishes the user's App Home; failures are logged, never thrown (it is a side view). */
export async function publishHome(deps: Deps, client: WebClient, actor: Actor): Promise<void> {
  try {
    const data = await homeData(deps, actor);
    const notice =
      data.isAdmin && (await rotationRefusedFor(deps.store, actor.team))
        ? ROTATION_REFUSED_TEXT
        : undefined;
    await client.views.publish({
      user_id: actor.user,
      view: buildHome({ ...data, settingsButton: true, notice }),
    });
  } catch (err) {
    deps.logger.warn({ err }, "could not publish App Home");
  }
}

const MAX_ADMINS_TOLD = 50;

/**
 * Tells the installation's admins (workspace admins and owners, never guests or bots) that the
 * refresh was refused: a DM each, and the notice on their App Home. Called once, by the instance
 * whose refresh Slack refused, with the token that still works until it expires.
 */
export async function tellAdminsRotationRefused(
  client: WebClient,
  owner: string,
  /** The workspaces to list (an org's token needs each named); [undefined] for a workspace's. */
  teams: ReadonlyArray<string | undefined>,
  logger: Logger,
): Promise<void> {
  const admins = new Set<string>();
  for (const team of teams) {
    let cursor: string | undefined;
    for (let page = 0; page < 20 && admins.size < MAX_ADMINS_TOLD; page++) {
      const res = await client.users.list({
        limit: 200,
        ...(team ? { team_id: team } : {}),
        ...(cursor ? { cursor } : {}),
      });
      for (const u of res.members ?? []) {
        if (!u.id || u.deleted || u.is_bot || u.is_restricted || u.is_ultra_restricted) continue;
        // An admin of this workspace, not of another organization seen in a shared channel.
        if (team && u.team_id && u.team_id !== team) continue;
        if (u.is_admin || u.is_owner || u.is_primary_owner) admins.add(u.id);
      }
      cursor = res.response_metadata?.next_cursor || undefined;
      if (!cursor) break;
    }
  }
  for (const user of [...admins].slice(0, MAX_ADMINS_TOLD)) {
    try {
      await client.chat.postMessage({ channel: user, text: ROTATION_REFUSED_TEXT });
      await client.views.publish({
        user_id: user,
        view: {
          type: "home",
          blocks: [
            { type: "header", text: { type: "plain_text", text: "On Air" } },
            { type: "section", text: { type: "mrkdwn", text: ROTATION_REFUSED_TEXT } },
          ],
        },
      });
    } catch (err) {
      logger.warn({ err, owner, user }, "an admin was not told of the refused token refresh");
    }
  }
  logger.info({ owner, admins: admins.size }, "told the admins Slack refused the token refresh");
}
