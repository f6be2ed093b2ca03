// `npm start` and `npm run rekey`, wherever they run: in a source checkout (tsx installed) the
// TypeScript in src/, in a production install (npm ci --omit=dev, npm run build: no tsx) the
// compiled dist/. One process either way, so signals reach the app itself.
// Usage: node scripts/run.mjs main|rekey
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const ENTRIES = new Set(["main", "rekey"]);
const name = process.argv[2] ?? "";
if (!ENTRIES.has(name)) {
  process.stderr.write(`usage: node scripts/run.mjs ${[...ENTRIES].join("|")}\n`);
  process.exit(2);
}
const root = resolve(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "..");
const source = join(root, "src", `${name}.ts`);
const compiled = join(root, "dist", `${name}.js`);

/** tsx's loader API, or undefined in a production install (no development dependencies). */
async function tsxApi() {
  try {
    return await import("tsx/esm/api");
  } catch (err) {
    if (err?.code === "ERR_MODULE_NOT_FOUND") return undefined;
    throw err;
  }
}
const tsx = existsSync(source) ? await tsxApi() : undefined;
if (tsx) {
  tsx.register();
  await import(pathToFileURL(source).href);
} else if (existsSync(compiled)) {
  process.setSourceMapsEnabled(true);
  await import(pathToFileURL(compiled).href);
} else {
  process.stderr.write(
    `onair: neither ${source} with tsx (a source checkout: npm ci) nor ${compiled} (npm run build) is here\n`,
  );
  process.exit(1);
}
