import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildOf, codeBuild, hashOfFiles } from "../../src/build-id.ts";

const dir = mkdtempSync(join(tmpdir(), "onair-build-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function tree(name: string, files: Record<string, string>): string {
  const root = join(dir, name);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe("the code's identity", () => {
  const files = { "main.js": "a()", "live/state.js": "b()", "live/refusals.js": "c()" };

  it("is the same for the same files, wherever they sit", () => {
    expect(hashOfFiles(tree("one", files))).toBe(hashOfFiles(tree("two", files)));
    expect(hashOfFiles(tree("three", files))).toMatch(/^[0-9a-f]{16}$/);
  });

  it("differs when a file's bytes change, a file is added, or one moves", () => {
    const base = hashOfFiles(tree("base", files));
    expect(hashOfFiles(tree("fixed", { ...files, "live/state.js": "b(1)" }))).not.toBe(base);
    expect(hashOfFiles(tree("added", { ...files, "live/new.js": "" }))).not.toBe(base);
    const moved = tree("moved", files);
    renameSync(join(moved, "live/state.js"), join(moved, "state.js"));
    expect(hashOfFiles(moved)).not.toBe(base);
  });

  it("is this process's own code, read once", () => {
    const own = codeBuild();
    expect(own).toMatch(/^[0-9a-f]{16}$/);
    expect(codeBuild()).toBe(own);
  });

  it("is this process's own when the files cannot be read, so the engine still starts", () => {
    const gone = join(dir, "never-made");
    expect(() => hashOfFiles(gone)).toThrow();
    const a = buildOf(gone);
    expect(a).toMatch(/^unread-[0-9a-f]{12}$/);
    expect(buildOf(gone)).not.toBe(a);
    expect(buildOf(tree("readable", files))).toBe(hashOfFiles(tree("readable2", files)));
  });
});
