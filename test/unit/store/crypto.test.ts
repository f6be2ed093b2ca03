import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  createCipher,
  DecryptError,
  isEncrypted,
  KEY_FILE,
  loadOrCreateKey,
} from "../../../src/store/crypto.ts";

const key = randomBytes(32);
const cipher = createCipher(key);
const SECRET = "xoxb-1234-5678-abcdefSECRET";

/** Flips one bit in the part of a v1 blob at `index` (1 iv, 2 tag, 3 ciphertext). */
function tamper(blob: string, index: 1 | 2 | 3): string {
  const parts = blob.split(".");
  const bytes = Buffer.from(parts[index]!, "base64url");
  bytes[0] = bytes[0]! ^ 0x01;
  parts[index] = bytes.toString("base64url");
  return parts.join(".");
}

function decryptError(fn: () => unknown): DecryptError {
  try {
    fn();
  } catch (err) {
    if (err instanceof DecryptError) return err;
    throw err;
  }
  throw new Error("decryption succeeded");
}

describe("createCipher", () => {
  it("round-trips, with a fresh IV each time and no plaintext in the blob", () => {
    const a = cipher.encrypt(SECRET, "install:T1#bot.token");
    const b = cipher.encrypt(SECRET, "install:T1#bot.token");
    expect(a).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]+$/);
    expect(a).not.toBe(b);
    expect(a).not.toContain("SECRET");
    expect(isEncrypted(a)).toBe(true);
    expect(isEncrypted(SECRET)).toBe(false);
    expect(cipher.decrypt(a, "install:T1#bot.token")).toBe(SECRET);
    expect(cipher.decrypt(cipher.encrypt("", "k"), "k")).toBe("");
    expect(cipher.decrypt(cipher.encrypt("héllo ✓", "k"), "k")).toBe("héllo ✓");
  });

  it("rejects tampering with the IV, the tag or the ciphertext", () => {
    const blob = cipher.encrypt(SECRET, "aad");
    for (const i of [1, 2, 3] as const) {
      const err = decryptError(() => cipher.decrypt(tamper(blob, i), "aad"));
      expect(err.code).toBe("decrypt_failed");
    }
    expect(decryptError(() => cipher.decrypt("v1.garbage", "aad")).message).toMatch(/format/);
    expect(decryptError(() => cipher.decrypt(SECRET, "aad")).message).not.toContain(SECRET);
  });

  it("rejects a value moved to another key (wrong AAD) and a wrong key, without leaking", () => {
    const blob = cipher.encrypt(SECRET, "install:T1#bot.token");
    const moved = decryptError(() => cipher.decrypt(blob, "install:T2#bot.token"));
    expect(moved.message).toContain("install:T2#bot.token");
    const other = createCipher(randomBytes(32));
    const wrongKey = decryptError(() => other.decrypt(blob, "install:T1#bot.token"));
    for (const e of [moved, wrongKey]) {
      expect(e.message).not.toContain(SECRET);
      expect(e.message).not.toContain(key.toString("base64"));
      expect(JSON.stringify(e)).not.toContain(SECRET);
    }
  });

  it("while rotating, opens values of the previous key as stale and seals only with the new one", () => {
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    const before = createCipher(oldKey).encrypt("relay-pass", "settings:T1#relayPassword");
    const rotating = createCipher(newKey, [oldKey]);
    expect(rotating.open(before, "settings:T1#relayPassword")).toEqual({
      plain: "relay-pass",
      stale: true,
    });
    expect(rotating.decrypt(before, "settings:T1#relayPassword")).toBe("relay-pass");
    const after = rotating.encrypt("relay-pass", "settings:T1#relayPassword");
    expect(rotating.open(after, "settings:T1#relayPassword").stale).toBe(false);
    expect(createCipher(newKey).decrypt(after, "settings:T1#relayPassword")).toBe("relay-pass");
    expect(() => createCipher(oldKey).decrypt(after, "settings:T1#relayPassword")).toThrow(
      DecryptError,
    );
    // Neither key: the current key's error, and the AAD still binds.
    expect(() => rotating.open(before, "settings:T2#relayPassword")).toThrow(DecryptError);
  });

  it("refuses a key that is not 32 bytes", () => {
    expect(() => createCipher(randomBytes(16))).toThrow(/32 bytes/);
  });
});

describe("loadOrCreateKey", () => {
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
  });
  async function tempDir() {
    const d = await mkdtemp(join(tmpdir(), "onair-key-"));
    dirs.push(d);
    return d;
  }

  it("returns the configured key in either mode", async () => {
    const configured = randomBytes(32);
    const dataDir = join(await tempDir(), "data");
    for (const mode of ["slack", "playground"] as const) {
      expect((await loadOrCreateKey({ configured, mode, dataDir })).equals(configured)).toBe(true);
    }
    await expect(stat(dataDir)).rejects.toThrow();
  });

  it("in the playground, creates dataDir/encryption.key with mode 0600 and reuses it", async () => {
    const dataDir = join(await tempDir(), "nested", "data");
    const first = await loadOrCreateKey({ mode: "playground", dataDir });
    expect(first.length).toBe(32);
    const file = join(dataDir, KEY_FILE);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(Buffer.from((await readFile(file, "utf8")).trim(), "base64").equals(first)).toBe(true);
    const again = await loadOrCreateKey({ mode: "playground", dataDir });
    expect(again.equals(first)).toBe(true);
  });

  it("gives every concurrent starter the same key", async () => {
    const dataDir = await tempDir();
    const keys = await Promise.all(
      Array.from({ length: 8 }, () => loadOrCreateKey({ mode: "playground", dataDir })),
    );
    for (const k of keys) expect(k.equals(keys[0]!)).toBe(true);
  });

  it("refuses a damaged key file instead of replacing it", async () => {
    const dataDir = await tempDir();
    await writeFile(join(dataDir, KEY_FILE), "not-a-key\n");
    await expect(loadOrCreateKey({ mode: "playground", dataDir })).rejects.toThrow(
      /32-byte base64 key/,
    );
  });

  it("in slack mode without a key, fails with a message naming the variable", async () => {
    const dataDir = await tempDir();
    await expect(loadOrCreateKey({ mode: "slack", dataDir })).rejects.toThrow(
      /ONAIR_ENCRYPTION_KEY is required/,
    );
    await expect(stat(join(dataDir, KEY_FILE))).rejects.toThrow();
  });
});
