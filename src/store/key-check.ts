import type { Cipher } from "./crypto.ts";
import { isUnopenable } from "./errors.ts";
import { installationRepo, settingsRepo } from "./records.ts";
import { bindRepository, type RepositoryDefinition } from "./repository.ts";
import type { Store } from "./store.ts";

/**
 * The encryption key is checked when the app starts, not when a user first acts: the store keeps
 * a canary, a known text sealed with the key. A key that does not open it is refused at once
 * with one line saying what to do; a previous key that does (ONAIR_ENCRYPTION_KEY_PREVIOUS, while
 * rotating) has the canary sealed again with the current one, as every value is when read.
 */

export const CANARY_KEY = "crypto:canary";
const CANARY_TEXT = "onair encryption canary";

export class EncryptionKeyError extends Error {
  override readonly name = "EncryptionKeyError";
}

/** The one line an operator reads; `source` names where the key came from. */
function refusal(source: string): EncryptionKeyError {
  return new EncryptionKeyError(
    `${source} does not open the secrets in this store (STORE_URL): they were sealed with another key. Set ${source} back to the key they were sealed with; to move to a new key, set the old one as ONAIR_ENCRYPTION_KEY_PREVIOUS and the new one as ONAIR_ENCRYPTION_KEY, then run npm run rekey.`,
  );
}

export type KeyCheck = "created" | "current" | "resealed";

export async function checkEncryptionKey(
  store: Store,
  cipher: Cipher,
  source = "ONAIR_ENCRYPTION_KEY",
): Promise<KeyCheck> {
  const canary = await store.get<{ sealed: string }>(CANARY_KEY);
  if (canary) {
    let opened: { plain: string; stale: boolean };
    try {
      opened = cipher.open(canary.sealed, CANARY_KEY);
    } catch {
      throw refusal(source);
    }
    if (opened.plain !== CANARY_TEXT) throw refusal(source);
    if (!opened.stale) return "current";
    await store.set(CANARY_KEY, { sealed: cipher.encrypt(CANARY_TEXT, CANARY_KEY) });
    return "resealed";
  }
  // A store from before the canary: one sealed record of each kind tells the same.
  const sealed: RepositoryDefinition[] = [installationRepo, settingsRepo];
  for (const def of sealed) {
    const repo = bindRepository(store, cipher, def);
    const [first] = await repo.ids();
    if (first === undefined) continue;
    try {
      await repo.get(first);
    } catch (err) {
      if (isUnopenable(err)) throw refusal(source);
      throw err;
    }
  }
  await store.set(CANARY_KEY, { sealed: cipher.encrypt(CANARY_TEXT, CANARY_KEY) });
  return "created";
}
