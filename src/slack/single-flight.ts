import type { InstallationQuery } from "@slack/bolt";

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
