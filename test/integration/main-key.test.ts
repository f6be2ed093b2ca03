import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { checkEncryptionKey, createCipher, openStore } from "../../src/store/index.ts";
import { runMain, tempDir } from "../helpers/main-process.ts";

/**
 * The app started on a store sealed with another ONAIR_ENCRYPTION_KEY, as an operator would meet
 * it: refused at start with one line that says what to do, before anything serves.
 */

async function sealedStore(dir: string, key: Buffer): Promise<string> {
  const url = `sqlite://${join(dir, "data", "onair.sqlite")}`;
  const cipher = createCipher(key);
  const store = await openStore(url, { cipher, sweepIntervalMs: 0 });
  await checkEncryptionKey(store, cipher);
  await store.settings.put("T0KEY", {
    ...(await store.settings.getOrDefault("T0KEY")),
    relayPassword: "relay-password-of-the-old-key",
  });
  await store.close();
  return url;
}

const slackEnv = (url: string, key: Buffer, extra: Record<string, string> = {}) => ({
  PORT: "0",
  LOG_LEVEL: "info",
  SLACK_BOT_TOKEN: "xoxb-key-test",
  SLACK_SIGNING_SECRET: "a-signing-secret-for-tests",
  SLACK_API_URL: "http://127.0.0.1:9/api",
  ONAIR_SANDBOX: "1",
  STORE_URL: url,
  ONAIR_ENCRYPTION_KEY: key.toString("base64"),
  ...extra,
});

describe("npm start with the wrong encryption key", () => {
  it("is refused at start: one line saying what to do, exit code 1, no secret in it", async () => {
    const cwd = tempDir();
    const url = await sealedStore(cwd, randomBytes(32));
    const wrong = randomBytes(32);
    const p = runMain(slackEnv(url, wrong), cwd);
    expect(await p.exited).toBe(1);
    const lines = p.err().trim().split("\n");
    expect(lines).toEqual([
      expect.stringMatching(
        /^onair: ONAIR_ENCRYPTION_KEY does not open the secrets in this store \(STORE_URL\).*set the old one as ONAIR_ENCRYPTION_KEY_PREVIOUS and the new one as ONAIR_ENCRYPTION_KEY, then run npm run rekey\.$/,
      ),
    ]);
    expect(p.out()).not.toMatch(/serving Slack/);
    expect(p.err() + p.out()).not.toContain(wrong.toString("base64"));
  });

  it("starts with the new key and the old one as ONAIR_ENCRYPTION_KEY_PREVIOUS", async () => {
    const cwd = tempDir();
    const old = randomBytes(32);
    const url = await sealedStore(cwd, old);
    const p = runMain(
      slackEnv(url, randomBytes(32), { ONAIR_ENCRYPTION_KEY_PREVIOUS: old.toString("base64") }),
      cwd,
    );
    // Past the key check, the app goes on to Slack (here an address nothing answers on).
    await p.waitFor(/canary is sealed with the new key now/);
    p.child.kill("SIGKILL");
  });

  it("npm run rekey seals every value with the new key; the old key can go", async () => {
    const cwd = tempDir();
    const old = randomBytes(32);
    const next = randomBytes(32);
    const url = await sealedStore(cwd, old);
    const root = resolve(import.meta.dirname, "../..");
    // What `npm run rekey` runs: in a source checkout, the TypeScript through tsx.
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [join(root, "scripts/run.mjs"), "rekey"],
      {
        cwd,
        env: {
          PATH: process.env.PATH ?? "",
          ...slackEnv(url, next, { ONAIR_ENCRYPTION_KEY_PREVIOUS: old.toString("base64") }),
        },
      },
    );
    expect(stdout).toMatch(
      /^onair rekey: 1 value sealed again with ONAIR_ENCRYPTION_KEY, 0 already were\.$/m,
    );
    expect(stdout).toContain("ONAIR_ENCRYPTION_KEY_PREVIOUS can be removed now");
    const cipher = createCipher(next);
    const store = await openStore(url, { cipher, sweepIntervalMs: 0 });
    try {
      expect(await checkEncryptionKey(store, cipher)).toBe("current");
      expect((await store.settings.get("T0KEY"))?.relayPassword).toBe(
        "relay-password-of-the-old-key",
      );
    } finally {
      await store.close();
    }
  });
});
