import type { Installation, InstallationQuery, InstallationStore } from "@slack/bolt";
import type { Store } from "../store/index.ts";
import { installationOwner } from "../store/index.ts";

/**
 * Bolt's installation store on our store: `install:{team or enterprise}`, tokens (and, with token
 * rotation, refresh tokens) encrypted. Bolt hands over the whole installation, refreshed tokens
 * included, and it is kept whole.
 */
export function createInstallationStore(store: Store): InstallationStore {
  const ownerOf = (q: InstallationQuery<boolean>): string => {
    const id = q.isEnterpriseInstall ? q.enterpriseId : q.teamId;
    if (!id) throw new Error("installation query names neither a team nor an enterprise");
    return id;
  };
  return {
    async storeInstallation(installation: Installation) {
      await store.installations.put(installationOwner(installation), installation);
    },
    async fetchInstallation(query) {
      const found = await store.installations.get(ownerOf(query));
      if (!found) throw new Error(`no installation for ${ownerOf(query)}`);
      return found;
    },
    async deleteInstallation(query) {
      await store.installations.delete(ownerOf(query));
    },
  };
}

/**
 * One authorization at a time per workspace. With token rotation, Bolt's authorize refreshes an
 * expiring token and stores the new one; a burst of requests would otherwise refresh it once
 * each and race to store the results. Concurrent callers share the call under way.
 */
export function singleFlightAuthorize<R>(
  authorize: (source: InstallationQuery<boolean>) => Promise<R>,
): (source: InstallationQuery<boolean>) => Promise<R> {
  const inflight = new Map<string, Promise<R>>();
  return (source) => {
    const key = source.isEnterpriseInstall
      ? `E:${source.enterpriseId ?? ""}`
      : `T:${source.teamId ?? ""}:${source.enterpriseId ?? ""}`;
    const running = inflight.get(key);
    if (running) return running;
    const p = authorize(source).finally(() => inflight.delete(key));
    inflight.set(key, p);
    return p;
  };
}
