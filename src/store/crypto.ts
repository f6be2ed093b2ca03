import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * Secrets at rest: AES-256-GCM with a random 12-byte IV per value. The additional authenticated
 * data names where the value lives (its store key and field), so a ciphertext copied to another
 * key or field fails to decrypt instead of passing for a different secret.
 *
 * Format: `v1.<iv>.<tag>.<ciphertext>`, each part base64url. The version prefix lets a later
 * format (or key rotation) coexist with values already stored.
 */

export interface Cipher {
  /** Seals with the current key. */
  encrypt(plain: string, aad: string): string;
  /** Opens with the current key or a previous one. */
  decrypt(blob: string, aad: string): string;
  /** As decrypt, and whether a previous key opened it (the value is due to be sealed again). */
  open(blob: string, aad: string): { plain: string; stale: boolean };
}

export const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const VERSION = "v1";
const BLOB = /^v1\.([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]*)$/;

/** Neither the message nor any property ever holds the plaintext or the key. */
export class DecryptError extends Error {
  override readonly name = "DecryptError";
  readonly code = "decrypt_failed";
  constructor(
    /** Where the value was meant to live (the AAD): a key name, never a secret. */
    readonly where: string,
    reason: "malformed" | "authentication",
  ) {
    super(
      reason === "malformed"
        ? `encrypted value for ${where} is not in the v1 format (corrupt or never encrypted)`
        : `encrypted value for ${where} failed authentication: wrong ONAIR_ENCRYPTION_KEY, tampered data, or a value moved from another key`,
    );
  }
}

export function isEncrypted(value: unknown): value is string {
  return typeof value === "string" && value.startsWith(`${VERSION}.`);
}

/**
 * `previous`: keys being rotated away from (ONAIR_ENCRYPTION_KEY_PREVIOUS). Values they open are
 * reported stale so the store seals them again with `key`; nothing new is sealed with them.
 */
export function createCipher(key: Buffer, previous: readonly Buffer[] = []): Cipher {
  for (const k of [key, ...previous]) {
    if (k.length !== KEY_BYTES) {
      throw new Error(`encryption key must be ${KEY_BYTES} bytes (got ${k.length})`);
    }
  }
  // Private copies: the caller's buffers may be reused or zeroed later.
  const k = Buffer.from(key);
  const older = previous.map((p) => createCipher(p));
  const cipher: Cipher = {
    encrypt(plain, aad) {
      const iv = randomBytes(IV_BYTES);
      const c = createCipheriv("aes-256-gcm", k, iv);
      c.setAAD(Buffer.from(aad, "utf8"));
      const ct = Buffer.concat([c.update(plain, "utf8"), c.final()]);
      const tag = c.getAuthTag();
      return `${VERSION}.${iv.toString("base64url")}.${tag.toString("base64url")}.${ct.toString("base64url")}`;
    },
    decrypt(blob, aad) {
      return older.length === 0 ? openWithKey(blob, aad) : cipher.open(blob, aad).plain;
    },
    open(blob, aad) {
      try {
        return { plain: openWithKey(blob, aad), stale: false };
      } catch (err) {
        for (const o of older) {
          try {
            return { plain: o.decrypt(blob, aad), stale: true };
          } catch {
            // the next previous key, if any
          }
        }
        throw err;
      }
    },
  };
  function openWithKey(blob: string, aad: string): string {
    const m = BLOB.exec(blob);
    if (!m) throw new DecryptError(aad, "malformed");
    const iv = Buffer.from(m[1]!, "base64url");
    const tag = Buffer.from(m[2]!, "base64url");
    const ct = Buffer.from(m[3]!, "base64url");
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) {
      throw new DecryptError(aad, "malformed");
    }
    try {
      const d = createDecipheriv("aes-256-gcm", k, iv, { authTagLength: TAG_BYTES });
      d.setAAD(Buffer.from(aad, "utf8"));
      d.setAuthTag(tag);
      return Buffer.concat([d.update(ct), d.final()]).toString("utf8");
    } catch {
      // OpenSSL's message says nothing useful and the cause is always one of the above.
      throw new DecryptError(aad, "authentication");
    }
  }
  return cipher;
}

export interface LoadKeyOptions {
  /** ONAIR_ENCRYPTION_KEY, already decoded (config validates its length). */
  configured?: Buffer | undefined;
  mode: "slack" | "playground";
  dataDir: string;
}

export const KEY_FILE = "encryption.key";

/**
 * The configured key wins. The playground, which must start with no setup, keeps a generated
 * key in `dataDir/encryption.key` (mode 0600) so its stored secrets survive restarts. A real
 * workspace never gets a generated key: losing that file would lose every stored token, so
 * the operator has to own the key.
 */
export async function loadOrCreateKey(opts: LoadKeyOptions): Promise<Buffer> {
  if (opts.configured) {
    if (opts.configured.length !== KEY_BYTES) {
      throw new Error(`ONAIR_ENCRYPTION_KEY must decode to ${KEY_BYTES} bytes`);
    }
    return opts.configured;
  }
  if (opts.mode === "slack") {
    throw new Error(
      "ONAIR_ENCRYPTION_KEY is required with Slack credentials: set it to 32 random bytes in base64 (for example: openssl rand -base64 32)",
    );
  }
  const file = join(opts.dataDir, KEY_FILE);
  const existing = await readKeyFile(file);
  if (existing) return existing;
  await mkdir(opts.dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(KEY_BYTES);
  try {
    // "wx": two processes starting at once must not each write a different key.
    await writeFile(file, `${key.toString("base64")}\n`, { mode: 0o600, flag: "wx" });
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    // Another process won the race; its write may still be in flight.
    for (let attempt = 0; ; attempt++) {
      try {
        const raced = await readKeyFile(file);
        if (raced) return raced;
      } catch (readErr) {
        if (attempt >= 5) throw readErr;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

async function readKeyFile(file: string): Promise<Buffer | undefined> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  const key = Buffer.from(text.trim(), "base64");
  if (key.length !== KEY_BYTES) {
    throw new Error(
      `${file} does not hold a ${KEY_BYTES}-byte base64 key; restore it or set ONAIR_ENCRYPTION_KEY (deleting it makes stored secrets unreadable)`,
    );
  }
  return key;
}
