import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { buildManifest } from "../../../manifest/manifest.ts";
import { renderManifest } from "../../../manifest/render.ts";
import { BOT_EVENTS, COMMAND, SHORTCUTS } from "../../../src/ids.ts";
import { botScopes } from "../../../src/slack/scopes.ts";

const committed = readFileSync(new URL("../../../app-manifest.yml", import.meta.url), "utf8");

describe("app-manifest.yml", () => {
  it("is exactly what manifest/ renders (run `npm run manifest -- --url …` after changing it)", () => {
    const url = /request_url: (https:\/\/[^/\s]+)\/slack\/events/.exec(committed)?.[1];
    expect(url).toBeDefined();
    expect(committed).toBe(renderManifest(url!));
  });

  it("declares the code's command, shortcuts, events and scopes and nothing else", () => {
    const m = parse(committed) as ReturnType<typeof buildManifest>;
    expect(m.features.slash_commands.map((c) => c.command)).toEqual([COMMAND]);
    expect(m.features.shortcuts.map((s) => s.callback_id)).toEqual(
      Object.values(SHORTCUTS).map((s) => s.callbackId),
    );
    expect(m.settings.event_subscriptions.bot_events).toEqual([...BOT_EVENTS]);
    expect(m.oauth_config.scopes.bot).toEqual(botScopes());
  });

  it("points every Slack URL at the one /slack/events endpoint and the OAuth redirect", () => {
    const m = buildManifest("https://h.example.com/");
    expect(m.features.slash_commands[0]?.url).toBe("https://h.example.com/slack/events");
    expect(m.settings.interactivity.request_url).toBe("https://h.example.com/slack/events");
    expect(m.settings.event_subscriptions.request_url).toBe("https://h.example.com/slack/events");
    expect(m.oauth_config.redirect_urls).toEqual(["https://h.example.com/slack/oauth_redirect"]);
  });

  it("keeps Slack's length limits for names and descriptions", () => {
    const m = buildManifest("https://h.example.com");
    expect(m.display_information.name.length).toBeLessThanOrEqual(35);
    expect(m.display_information.description.length).toBeLessThanOrEqual(140);
    expect(m.display_information.long_description.length).toBeGreaterThanOrEqual(174);
    expect(m.display_information.long_description.length).toBeLessThanOrEqual(4000);
    for (const c of m.features.slash_commands)
      expect(c.description.length).toBeLessThanOrEqual(100);
    for (const s of m.features.shortcuts) expect(s.description.length).toBeLessThanOrEqual(150);
  });
});
