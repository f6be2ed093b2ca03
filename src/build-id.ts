import { createHash, randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * What code this process runs, as a short hash of every file of the app's own code (`src/` run
 * through tsx, or `dist/` as built). Two processes of one deploy agree; a fix deployed differs,
 * whatever the package's version says (it is not bumped per deploy). The live engine stores it
 * with an item its model threw on, so that an instance of other code tries that item although it
 * was already running when the item was set aside (a rolling deploy: refusals.ts).
 *
 * Read once per thread, at first use: about 2 MB, a few milliseconds.
 */
let memo: string | undefined;

export function codeBuild(): string {
  memo ??= buildOf(fileURLToPath(new URL(".", import.meta.url)));
  return memo;
}

/**
 * hashOfFiles, or, when the files cannot be read whole (one removed mid-walk: an editor's atomic
 * save, a build emptying dist/), an identity of this process alone. The engine starts either way;
 * such a process takes every refused item as other code's and tries each once.
 */
export function buildOf(root: string): string {
  try {
    return hashOfFiles(root);
  } catch {
    return `unread-${randomBytes(6).toString("hex")}`;
  }
}

/** A short hash of every file under `root`: their paths (a file moved is other code) and bytes. */
export function hashOfFiles(root: string): string {
  const hash = createHash("sha256");
  for (const file of filesUnder(root)) {
    hash.update(relative(root, file)).update("\0").update(readFileSync(file)).update("\0");
  }
  return hash.digest("hex").slice(0, 16);
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  )) {
    const path = join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(path));
    else if (e.isFile()) out.push(path);
  }
  return out;
}
