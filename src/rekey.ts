import { startCommand } from "./cli.ts";
import { ConfigError } from "./config.ts";
import { LIVE_REPOSITORIES } from "./live/live-record.ts";
import { createCipher, loadOrCreateKey, openStore } from "./store/index.ts";
import { CORE_REPOSITORIES } from "./store/records.ts";
import { rekeyStore } from "./store/rekey.ts";
import { storeStartError } from "./store/start-error.ts";

/**
 * `npm run rekey` (from the build: `node dist/rekey.js`): seals every stored secret with
 * ONAIR_ENCRYPTION_KEY, opening those still sealed with ONAIR_ENCRYPTION_KEY_PREVIOUS. Run it
 * once every instance has both keys; afterwards the previous key can be removed. Same
 * environment as the app (a `.env` file in the working directory is read too).
 */

const values = (n: number) => `${n} ${n === 1 ? "value" : "values"}`;

const { config, fail } = startCommand("onair rekey");

const key = await loadOrCreateKey({
  configured: config.encryptionKey,
  mode: config.mode,
  dataDir: "data",
});
const cipher = createCipher(
  key,
  config.previousEncryptionKey ? [config.previousEncryptionKey] : [],
);
const store = await openStore(config.store.url, { cipher, sweepIntervalMs: 0 }).catch(
  (err: unknown) => {
    const told = storeStartError(err, config);
    if (told instanceof ConfigError) fail(told.message);
    throw err;
  },
);
try {
  const r = await rekeyStore(store, cipher, [...CORE_REPOSITORIES, ...LIVE_REPOSITORIES]);
  const dropped =
    r.dropped > 0
      ? `, ${r.dropped} cached upstream tokens no key opened dropped (fetched anew when needed)`
      : "";
  process.stdout.write(
    `onair rekey: ${values(r.resealed)} sealed again with ONAIR_ENCRYPTION_KEY, ${r.current} already ${r.current === 1 ? "was" : "were"}${dropped}.\n`,
  );
  if (r.unreadable.length > 0) {
    fail(
      `${r.unreadable.length} values no key opens, left as they are: ${r.unreadable.join(", ")}. Keep ONAIR_ENCRYPTION_KEY_PREVIOUS until they are restored or entered again (settings) or the workspace reinstalls the app.`,
    );
  }
  if (config.previousEncryptionKey) {
    process.stdout.write("onair rekey: ONAIR_ENCRYPTION_KEY_PREVIOUS can be removed now.\n");
  }
} catch (err) {
  if ((err as Error).name === "EncryptionKeyError") fail((err as Error).message);
  throw err;
} finally {
  await store.close();
}
