import { type SlackEmulator, startSlackEmulator } from "@onair/slack-emulator";
import { WebClient } from "@slack/web-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UserFacingError } from "../../src/domain/errors.ts";
import { createLogger } from "../../src/log.ts";
import { DirectoryCaches } from "../../src/slack/directory.ts";

/**
 * A throttled lookup may answer from the cache, but not with an answer from long ago: admin
 * rights, group members and channel membership decide who may do what, and a demotion must not
 * be outlived by a member who keeps Slack's users.info throttled.
 */

const ADMIN = "U0ADA0ADMIN";
let emu: SlackEmulator;
let clock = Date.UTC(2026, 0, 1);

beforeAll(async () => {
  emu = await startSlackEmulator({
    signingSecret: "directory-stale",
    rateLimits: false,
    seed: { botScopes: ["users:read", "users:read.email"] },
  });
});
afterAll(async () => {
  await emu?.close();
});

describe("the directory under throttling", () => {
  it("answers a throttled lookup from a recent entry, and refuses rather than use an old one", async () => {
    const caches = new DirectoryCaches(createLogger({ level: "silent" }), () => clock);
    const client = new WebClient(emu.botToken, {
      slackApiUrl: emu.apiUrl,
      retryConfig: { retries: 0 },
    });
    const dir = caches.for(emu.workspace.team.id, client);
    expect((await dir.profile(ADMIN)).isAdmin).toBe(true);

    // Two minutes on (past the 60 s of a fresh entry), throttled: the entry still answers.
    clock += 2 * 60_000;
    emu.throttle({ method: "users.info", times: 1, retryAfterSec: 5 });
    expect((await dir.profile(ADMIN)).isAdmin).toBe(true);

    // Eleven minutes on, throttled: too old to decide anything; a plain "try again".
    clock += 9 * 60_000;
    emu.throttle({ method: "users.info", times: 1, retryAfterSec: 5 });
    const refused = await dir.profile(ADMIN).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(UserFacingError);
    expect((refused as Error).message).toContain("try again in 5 seconds");

    // Not throttled: a fresh answer, as Slack has it now.
    expect((await dir.profile(ADMIN)).isAdmin).toBe(true);
    expect(emu.calls.filter((c) => c.method === "users.info").map((c) => c.status)).toEqual([
      200, 429, 429, 200,
    ]);
  });
});
