import { readFileSync } from "node:fs";
import { App } from "@slack/bolt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { buildManifest } from "../../manifest/manifest.ts";
import { BOT_EVENTS, COMMAND, SHORTCUTS } from "../../src/ids.ts";
import { type Harness, startHarness } from "../helpers/app-harness.ts";

/**
 * The code registers exactly what app-manifest.yml declares: the real composition root is
 * started with Bolt's registration methods recording their first argument (this file runs in its
 * own worker, so the recording stays here).
 */

const recorded = {
  command: [] as unknown[],
  shortcut: [] as unknown[],
  event: [] as unknown[],
  message: [] as unknown[],
  options: [] as unknown[],
  function: [] as unknown[],
};
type Recorded = keyof typeof recorded;

const originals = new Map<Recorded, unknown>();
for (const name of Object.keys(recorded) as Recorded[]) {
  const proto = App.prototype as unknown as Record<Recorded, (...args: unknown[]) => unknown>;
  const original = proto[name];
  originals.set(name, original);
  proto[name] = function (this: App, ...args: unknown[]) {
    const first = args[0];
    // A shortcut or option listener may be registered by constraints object.
    recorded[name].push(
      typeof first === "object" && first !== null && "callback_id" in first
        ? (first as { callback_id: unknown }).callback_id
        : first,
    );
    return original.apply(this, args);
  };
}

const manifest = parse(
  readFileSync(new URL("../../app-manifest.yml", import.meta.url), "utf8"),
) as ReturnType<typeof buildManifest>;

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
  const proto = App.prototype as unknown as Record<Recorded, unknown>;
  for (const [name, original] of originals) proto[name] = original;
});

describe("listeners against app-manifest.yml", () => {
  it("registers the manifest's one slash command and nothing else", () => {
    expect(recorded.command).toEqual(manifest.features.slash_commands.map((c) => c.command));
    expect(recorded.command).toEqual([COMMAND]);
  });

  it("registers exactly the manifest's shortcuts", () => {
    const declared = manifest.features.shortcuts.map((s) => s.callback_id).sort();
    expect([...new Set(recorded.shortcut.map(String))].sort()).toEqual(declared);
    expect(declared).toEqual(
      Object.values(SHORTCUTS)
        .map((s) => s.callbackId)
        .sort(),
    );
  });

  it("registers exactly the manifest's Workflow Builder steps", () => {
    expect(recorded.function.map(String).sort()).toEqual(Object.keys(manifest.functions).sort());
  });

  it("listens to exactly the manifest's bot events, and to no messages", () => {
    const declared = [...manifest.settings.event_subscriptions.bot_events].sort();
    // A custom step's listener (app.function) is what listens to function_executed.
    const listened = [
      ...recorded.event.map(String),
      ...(recorded.function.length > 0 ? ["function_executed"] : []),
    ];
    expect([...new Set(listened)].sort()).toEqual(declared);
    expect(declared).toEqual([...BOT_EVENTS].sort());
    expect(recorded.message).toEqual([]);
    // The manifest declares no options load URL.
    expect(recorded.options).toEqual([]);
  });
});
