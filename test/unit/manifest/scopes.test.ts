import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { botScopes, EXTRA_SCOPES, METHOD_SCOPES } from "../../../src/slack/scopes.ts";

/**
 * The scopes the app asks for are exactly those it uses: the table of methods (scopes.ts) holds
 * every Web API method the code calls, and nothing it does not call.
 */

// Web API calls in src/ are made on a client named client, bulk, quiet or web (by convention, so
// this scan finds them all).
const SRC = resolve(import.meta.dirname, "../../../src");
const FAMILIES =
  "auth|calls|chat|conversations|entity|files|oauth|usergroups|users|views|team|reactions|pins";
const CALL = new RegExp(
  `\\b(?:client|bulk|quiet|web)\\.(${FAMILIES})\\.([a-zA-Z0-9]+(?:\\.[a-zA-Z]+)?)\\(`,
  "g",
);

function appFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      // The emulated Slack and the sandbox are not the app's own calls.
      return name === "playground" || name === "sandbox" ? [] : appFiles(path);
    }
    return name.endsWith(".ts") ? [path] : [];
  });
}

function calledMethods(): Set<string> {
  const out = new Set<string>();
  for (const f of appFiles(SRC)) {
    for (const m of readFileSync(f, "utf8").matchAll(CALL)) out.add(`${m[1]}.${m[2]}`);
  }
  return out;
}

describe("the app's Slack scopes", () => {
  const called = calledMethods();

  it("finds the calls it checks (the scan works)", () => {
    expect(called.has("chat.postMessage")).toBe(true);
    expect(called.has("usergroups.users.list")).toBe(true);
  });

  it("every method the code calls is in the table (so its scope is asked for)", () => {
    const table = new Set(Object.keys(METHOD_SCOPES));
    expect([...called].filter((m) => !table.has(m)).sort()).toEqual([]);
  });

  it("the table holds no method the code does not call (no scope asked for nothing)", () => {
    expect(
      Object.keys(METHOD_SCOPES)
        .filter((m) => !called.has(m))
        .sort(),
    ).toEqual([]);
  });

  it("asks for every scope of the table and the few it needs beyond methods, and no other", () => {
    const fromTable = Object.values(METHOD_SCOPES).flatMap((s) =>
      s === null ? [] : typeof s === "string" ? [s] : [...s],
    );
    expect(new Set(botScopes())).toEqual(new Set([...fromTable, ...EXTRA_SCOPES]));
  });
});
