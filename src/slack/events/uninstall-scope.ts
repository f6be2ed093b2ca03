import type { Context } from "@slack/bolt";
import { forgetTeam } from "../../domain/uninstall.ts";
import type { ListenerKit } from "../kit.ts";
import { forgetOrgWorkspaces } from "../org-workspaces.ts";
import { isOrgInstall } from "../workspace.ts";

/**
 * What an uninstall forgets. On an org-wide install, an org-level event (the enterprise, no
 * workspace) removes the org's installation and what it alone made (records under the enterprise
 * id, the workspaces it served); a workspace removing the app loses that workspace's data and
 * the org's installation stays. Otherwise the workspace's data, its installation included.
 */
export async function forgetInstall(
  kit: ListenerKit,
  body: { team_id?: string } & Record<string, unknown>,
  context: Context,
  reason: string,
): Promise<void> {
  const enterprise = context.enterpriseId;
  const team = context.teamId ?? body.team_id;
  if (isOrgInstall(body) && enterprise && (!team || team === enterprise)) {
    await forgetTeam(kit.deps, enterprise, `${reason} (org)`);
    await forgetOrgWorkspaces(kit.deps.store, { enterprise });
    return;
  }
  if (!team) {
    kit.deps.logger.warn(`${reason} without a team id; nothing deleted`);
    return;
  }
  await forgetTeam(kit.deps, team, reason);
  await forgetOrgWorkspaces(kit.deps.store, { team });
}
