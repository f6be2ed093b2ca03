import type { Store } from "../store/index.ts";
import type { Stored } from "./installation-record.ts";

/** A workspace of an org-wide install → the enterprise whose installation serves it. */
export const ORG_TEAM_PREFIX = "orgteam:";

/** The workspaces an org-wide installation has served so far (its requests named them). */
export async function workspacesOf(store: Store, enterprise: string): Promise<string[]> {
  const out: string[] = [];
  for (const key of await store.keys(ORG_TEAM_PREFIX)) {
    if ((await store.get<string>(key)) === enterprise) out.push(key.slice(ORG_TEAM_PREFIX.length));
  }
  return out;
}

/**
 * Forgets which workspaces an org-wide installation served (the org uninstalled), or that one
 * workspace was served by one (the workspace uninstalled). Returns how many were forgotten.
 */
export async function forgetOrgWorkspaces(
  store: Store,
  owner: { enterprise: string } | { team: string },
): Promise<number> {
  if ("team" in owner) return (await store.delete(`${ORG_TEAM_PREFIX}${owner.team}`)) ? 1 : 0;
  const doomed = (await workspacesOf(store, owner.enterprise)).map((t) => `${ORG_TEAM_PREFIX}${t}`);
  return doomed.length ? store.deleteMany(doomed) : 0;
}

/** Whether Slack refused to refresh the token serving this workspace (its own, or its org's). */
export async function rotationRefusedFor(store: Store, team: string): Promise<boolean> {
  const own = (await store.installations.get(team)) as Stored | undefined;
  if (own) return own.rotationRefusedAt !== undefined;
  const org = await store.get<string>(`${ORG_TEAM_PREFIX}${team}`);
  const inst = org ? ((await store.installations.get(org)) as Stored | undefined) : undefined;
  return inst?.rotationRefusedAt !== undefined;
}
