import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { createCipher, openStore } from "../../src/store/index.ts";

/**
 * Opens the store at argv[2], closes it, and prints which store client libraries this process
 * loaded (test/integration/store-lazy.test.ts runs it in a fresh process).
 */
const store = await openStore(process.argv[2] ?? "", { cipher: createCipher(randomBytes(32)) });
await store.close();
const cache = Object.keys(createRequire(import.meta.url).cache);
const loaded = (dir: string) => cache.some((k) => k.includes(`/node_modules/${dir}/`));
process.stdout.write(
  JSON.stringify({ sqlite3: loaded("sqlite3"), redis: loaded("@redis/client"), pg: loaded("pg") }),
);
