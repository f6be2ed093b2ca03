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

  it("declares the two Workflow Builder steps of the README in the v1 form Slack's schema takes", () => {
    const m = parse(committed) as ReturnType<typeof buildManifest>;
    expect(m._metadata.major_version).toBe(1);
    expect(Object.keys(m.functions)).toEqual(["schedule_live_event", "get_event_attendance"]);
    const shape = (params: Record<string, { type: string; is_required: boolean }>) =>
      Object.fromEntries(Object.entries(params).map(([k, p]) => [k, [p.type, p.is_required]]));
    const schedule = m.functions.schedule_live_event;
    expect(shape(schedule.input_parameters)).toEqual({
      title: ["string", true],
      start: ["slack#/types/timestamp", true],
      end: ["slack#/types/timestamp", true],
      organizer: ["slack#/types/user_id", true],
      description: ["string", false],
      channel: ["slack#/types/channel_id", false],
    });
    expect(shape(schedule.output_parameters)).toEqual({
      event_id: ["string", true],
      join_url: ["string", true],
      start: ["slack#/types/timestamp", true],
    });
    const attendance = m.functions.get_event_attendance;
    expect(shape(attendance.input_parameters)).toEqual({ event_id: ["string", true] });
    expect(shape(attendance.output_parameters)).toEqual({
      peak: ["integer", true],
      unique: ["integer", true],
      present_at_end: ["integer", true],
      state: ["string", true],
    });
    for (const [id, f] of Object.entries(m.functions)) {
      expect(id.length).toBeLessThanOrEqual(100);
      expect(f.title.length).toBeGreaterThan(0);
      expect(f.title.length).toBeLessThanOrEqual(255);
      expect(f.description.length).toBeGreaterThan(0);
      // v1: parameters keyed by name; the v2 shape ({properties, required}) is invalid under v1.
      expect(f.input_parameters).not.toHaveProperty("properties");
      expect(f.output_parameters).not.toHaveProperty("properties");
      const all = [...Object.values(f.input_parameters), ...Object.values(f.output_parameters)];
      expect(Object.keys(f.input_parameters).length).toBeLessThanOrEqual(50);
      for (const p of all) {
        expect(typeof p.type).toBe("string");
        expect(typeof p.is_required).toBe("boolean");
      }
    }
    // Custom steps need an org-ready app, the event, and a remote runtime (this server).
    expect(m.settings.org_deploy_enabled).toBe(true);
    expect(m.settings.function_runtime).toBe("remote");
    expect(m.settings.event_subscriptions.bot_events).toContain("function_executed");
  });
});
