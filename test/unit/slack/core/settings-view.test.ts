import { validateView } from "@onair/slack-emulator";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  decodeSettingsMeta,
  formatDuration,
  MAX_TOKEN_MS,
  MIN_TOKEN_MS,
  NO_LIMIT,
  parseDuration,
  settingsView,
} from "../../../../src/blocks/settings.ts";
import {
  applySettingsForm,
  readSettingsForm,
  type SettingsForm,
  type ViewStateValues,
} from "../../../../src/blocks/settings-form.ts";
import { allowedDurations } from "../../../../src/domain/tokens.ts";
import { SETTINGS_FIELDS as F } from "../../../../src/ids.ts";
import { DEFAULT_SETTINGS, type Settings } from "../../../../src/store/index.ts";

const stored: Settings = {
  ...structuredClone(DEFAULT_SETTINGS),
  eventsAppKey: "key-1",
  eventsAppSecret: "stored-events-secret",
  relayUsername: "acme",
  relayPassword: "stored-relay-password",
};

const form = (over: Partial<SettingsForm> = {}): SettingsForm => ({
  eventsAppKey: "key-1",
  eventsAppSecret: undefined,
  relayUsername: "acme",
  relayPassword: undefined,
  whoMaySchedule: "everyone",
  whoMayMint: "admins",
  longestToken: "14d",
  auditChannel: undefined,
  showAttendeeEmails: false,
  ...over,
});

describe("settingsView", () => {
  it("is a valid modal that never carries a secret", () => {
    const view = settingsView({ settings: stored, usergroups: [], meta: { channel: "C1" } });
    expect(validateView(view).messages).toEqual([]);
    const json = JSON.stringify(view);
    expect(json).not.toContain("stored-events-secret");
    expect(json).not.toContain("stored-relay-password");
    expect(json).toContain("set — leave empty to keep");
    expect(decodeSettingsMeta(view.private_metadata)).toEqual({ channel: "C1" });
  });

  it("says 'not set' for a missing secret", () => {
    const view = settingsView({
      settings: structuredClone(DEFAULT_SETTINGS),
      usergroups: [],
      meta: {},
    });
    expect(JSON.stringify(view)).toContain('"not set"');
    expect(JSON.stringify(view)).not.toContain("leave empty to keep");
  });

  it("stays within Slack's limits with many user groups and a long check result", () => {
    const groups = Array.from({ length: 250 }, (_, i) => ({
      id: `S${i}`,
      handle: `group-${i}`,
      name: `Group ${i}`,
    }));
    const view = settingsView({
      settings: {
        ...stored,
        policy: { whoMaySchedule: { usergroup: "SGONE" }, whoMayMint: "admins" },
      },
      usergroups: groups,
      meta: {},
      check: { lines: Array.from({ length: 200 }, () => "x".repeat(40)) },
    });
    expect(validateView(view).messages).toEqual([]);
    // A group chosen before stays selected even when it is not listed.
    const select = view.blocks.find((b) => b.block_id === F.whoMaySchedule) as unknown as {
      element: { initial_option: { value: string }; options: unknown[] };
    };
    expect(select.element.initial_option.value).toBe("group:SGONE");
    expect(select.element.options).toHaveLength(100);
  });
});

describe("durations", () => {
  it("reads the forms the hint names", () => {
    expect(parseDuration("90m")).toBe(90 * 60_000);
    expect(parseDuration("12h")).toBe(12 * 3_600_000);
    expect(parseDuration("14 days")).toBe(14 * 86_400_000);
    expect(parseDuration("2w")).toBe(14 * 86_400_000);
    expect(parseDuration("forever")).toBeUndefined();
    expect(parseDuration("-1d")).toBeUndefined();
  });

  it("reads never as no ceiling, which lets members mint tokens that never expire", () => {
    expect(parseDuration("never")).toBe(NO_LIMIT);
    expect(formatDuration(NO_LIMIT)).toBe("never");
    expect(allowedDurations(parseDuration("Never")!)).toContain("never");
    expect(allowedDurations(parseDuration("365d")!)).not.toContain("never");
    const applied = applySettingsForm(stored, form({ longestToken: "never" }));
    expect(applied.ok).toBe(true);
  });

  it("formats what it reads back to the same duration", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 525_600 }), (minutes) => {
        const ms = minutes * 60_000;
        expect(parseDuration(formatDuration(ms))).toBe(ms);
      }),
    );
  });
});

describe("applySettingsForm", () => {
  it("keeps stored secrets when the fields are left empty, and replaces them when typed", () => {
    const kept = applySettingsForm(stored, form());
    expect(kept.ok && kept.settings.eventsAppSecret).toBe("stored-events-secret");
    expect(kept.ok && kept.settings.relayPassword).toBe("stored-relay-password");
    expect(kept.ok && kept.changed).toEqual([]);
    const replaced = applySettingsForm(stored, form({ eventsAppSecret: " new secret " }));
    expect(replaced.ok && replaced.settings.eventsAppSecret).toBe(" new secret ");
    expect(replaced.ok && replaced.changed).toEqual(["eventsAppSecret"]);
  });

  it("answers bad values with errors keyed by the field's block", () => {
    const r = applySettingsForm(
      stored,
      form({
        eventsAppKey: undefined,
        eventsAppSecret: "s",
        relayUsername: "a:b",
        longestToken: "400d",
        whoMayMint: "nobody",
      }),
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(Object.keys(r.errors).sort()).toEqual(
      [F.eventsKey, F.relayUsername, F.longestToken, F.whoMayMint].sort(),
    );
    expect(r.errors[F.longestToken]).toBe("Pick between 1 minute and 365 days, or never.");
  });

  it("accepts exactly the bounds of the longest token", () => {
    expect(applySettingsForm(stored, form({ longestToken: formatDuration(MIN_TOKEN_MS) })).ok).toBe(
      true,
    );
    expect(applySettingsForm(stored, form({ longestToken: formatDuration(MAX_TOKEN_MS) })).ok).toBe(
      true,
    );
    expect(applySettingsForm(stored, form({ longestToken: "366d" })).ok).toBe(false);
  });

  it("reads a group policy, the audit channel and privacy from Slack's view state", () => {
    const values: ViewStateValues = {
      [F.eventsKey]: { [F.eventsKey]: { value: " key-2 " } },
      [F.eventsSecret]: { [F.eventsSecret]: { value: "" } },
      [F.relayUsername]: { [F.relayUsername]: { value: "acme" } },
      [F.whoMaySchedule]: { [F.whoMaySchedule]: { selected_option: { value: "group:S0ORG" } } },
      [F.whoMayMint]: { [F.whoMayMint]: { selected_option: { value: "everyone" } } },
      [F.longestToken]: { [F.longestToken]: { value: "1h" } },
      [F.auditChannel]: { [F.auditChannel]: { selected_conversation: "C0AUDIT" } },
      [F.privacy]: { [F.privacy]: { selected_options: [{ value: "show_attendee_emails" }] } },
    };
    const r = applySettingsForm(stored, readSettingsForm(values));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.settings).toMatchObject({
      eventsAppKey: "key-2",
      eventsAppSecret: "stored-events-secret",
      policy: { whoMaySchedule: { usergroup: "S0ORG" }, whoMayMint: "everyone" },
      longestTokenMs: 3_600_000,
      auditChannel: "C0AUDIT",
      privacy: { showAttendeeEmails: true },
    });
    expect(r.changed).toEqual([
      "eventsAppKey",
      "longestTokenMs",
      "auditChannel",
      "policy.whoMaySchedule",
      "policy.whoMayMint",
      "privacy",
    ]);
  });
});
