import { ErrorCode } from "@slack/web-api";
import { describe, expect, it } from "vitest";
import { isPassingRefusal } from "../../../../src/slack-errors.ts";

/** A post that met an expired rotating token is tried again, never a reason to stop posting. */
describe("token_expired", () => {
  const platform = (error: string) =>
    Object.assign(new Error(error), { code: ErrorCode.PlatformError, data: { ok: false, error } });

  it("passes (the live engine tries again with the refreshed token)", () => {
    expect(isPassingRefusal(platform("token_expired"))).toBe(true);
  });

  it("a revoked token or a channel refusal does not pass", () => {
    expect(isPassingRefusal(platform("token_revoked"))).toBe(false);
    expect(isPassingRefusal(platform("not_in_channel"))).toBe(false);
  });
});
