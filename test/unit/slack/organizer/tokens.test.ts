import { describe, expect, it } from "vitest";
import { readTokenForm as readDraft, tokenErrorsToBlocks } from "../../../../src/blocks/tokens.ts";
import type { ViewStateValues } from "../../../../src/blocks/view-state.ts";
import {
  allowedDurations,
  checkTokenDraft,
  NEVER_ALLOWED_MS,
} from "../../../../src/domain/tokens.ts";
import { TOKEN_FIELDS as T } from "../../../../src/ids.ts";
import { RELAY_ROLES } from "../../../../src/upstream/relay/schemas.ts";

/** The form as read, then checked against the policy, with errors under the form's fields. */
function readTokenForm(values: ViewStateValues, policy: { longestTokenMs: number }) {
  const r = checkTokenDraft(readDraft(values), policy, RELAY_ROLES);
  return "errors" in r ? { errors: tokenErrorsToBlocks(r.errors) } : r;
}

const DAY = 86_400_000;

function form(v: {
  roles?: string[];
  duration?: string;
  hours?: string;
  code?: string;
  name?: string;
}): ViewStateValues {
  return {
    [T.roles]: {
      [T.roles]: {
        selected_options: (v.roles ?? ["ROLE_READONLY", "ROLE_READWRITE"]).map((value) => ({
          value,
        })),
      },
    },
    [T.duration]: { [T.duration]: { selected_option: v.duration ? { value: v.duration } : null } },
    [T.customHours]: { [T.customHours]: { value: v.hours ?? null } },
    [T.clientName]: { [T.clientName]: { value: v.name ?? null } },
    [T.pairingCode]: { [T.pairingCode]: { value: v.code ?? null } },
  };
}

describe("token durations under the policy", () => {
  it("offers only what the longest allowed covers; never only without a ceiling", () => {
    expect(allowedDurations(12 * 3_600_000)).toEqual(["custom"]);
    expect(allowedDurations(7 * DAY)).toEqual(["day", "custom"]);
    expect(allowedDurations(14 * DAY)).toEqual(["day", "twoWeeks", "custom"]);
    expect(allowedDurations(NEVER_ALLOWED_MS)).toEqual(["day", "twoWeeks", "custom", "never"]);
  });

  it("maps each choice to what the relay is sent", () => {
    const policy = { longestTokenMs: Number.MAX_SAFE_INTEGER };
    const ms = (d: string, hours?: string) => {
      const r = readTokenForm(form({ duration: d, ...(hours ? { hours } : {}) }), policy);
      return "request" in r ? r.request.durationMs : r.errors;
    };
    expect(ms("day")).toBe(DAY);
    expect(ms("twoWeeks")).toBeUndefined(); // the relay's own default
    expect(ms("never")).toBe(-1);
    expect(ms("custom", "36")).toBe(36 * 3_600_000);
  });

  it("refuses a choice the policy does not allow, and a custom length beyond it", () => {
    const policy = { longestTokenMs: 7 * DAY };
    expect(readTokenForm(form({ duration: "twoWeeks" }), policy)).toMatchObject({
      errors: { [T.duration]: expect.stringMatching(/7 days/) },
    });
    expect(readTokenForm(form({ duration: "custom", hours: "169" }), policy)).toMatchObject({
      errors: { [T.customHours]: expect.any(String) },
    });
    expect(readTokenForm(form({ duration: "custom", hours: "1.5" }), policy)).toMatchObject({
      errors: { [T.customHours]: expect.any(String) },
    });
  });

  it("a pairing code needs no custom hours (the relay makes it 1 day) and keeps the client name", () => {
    const r = readTokenForm(form({ duration: "custom", code: " PAIR ", name: " Kiosk " }), {
      longestTokenMs: 14 * DAY,
    });
    expect(r).toMatchObject({ request: { pairingCode: "PAIR", clientName: "Kiosk" } });
  });
});
