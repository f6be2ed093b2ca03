import type { Cipher } from "./crypto.ts";
import { isUnopenable } from "./errors.ts";
import type { Store } from "./index.ts";
import { checkEncryptionKey } from "./key-check.ts";
import { type RepositoryDefinition, repositoryList } from "./repository.ts";

export interface RekeyReport {
  /** Values a previous key opened, sealed again with the current one. */
  resealed: number;
  /** Values already sealed with the current key. */
  current: number;
  /** Cached upstream tokens no key opened: dropped, to be fetched anew when next needed. */
  dropped: number;
  /** Keys (never values) of records no key opens and nothing can fetch anew. */
  unreadable: string[];
}

/**
 * `npm run rekey`: every sealed value of every repository read and, where a previous key sealed
 * it, sealed again with the current key, so that the previous key can be retired. Safe beside
 * running instances (a record changed meanwhile is left to its writer) and safe to run again.
 */
export async function rekeyStore(
  store: Store,
  cipher: Cipher,
  repositories: readonly RepositoryDefinition[],
): Promise<RekeyReport> {
  await checkEncryptionKey(store, cipher);
  const report: RekeyReport = { resealed: 0, current: 0, dropped: 0, unreadable: [] };
  for (const def of repositoryList(repositories)) {
    if (def.encryptedFields.length === 0) continue;
    const repo = store.repository(def);
    for (const id of await repo.ids()) {
      try {
        const outcome = await repo.reseal(id);
        if (outcome === "resealed") report.resealed++;
        else if (outcome === "current") report.current++;
      } catch (err) {
        if (!isUnopenable(err)) throw err;
        if (def.prefix === "token") {
          await repo.delete(id);
          report.dropped++;
        } else {
          report.unreadable.push(repo.key(id));
        }
      }
    }
  }
  return report;
}
