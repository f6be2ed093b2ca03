import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROTATION_REFUSED_TEXT } from "../../src/slack/home.ts";
import { NoInstallationError } from "../../src/slack-errors.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { createSecretScanner } from "../helpers/secrets.ts";

let h: Harness;
/** Every bot or refresh token the suite saw: none may reach a log line. */
const tokens = new Set<string>();

beforeAll(async () => {
  h = await startHarness({ oauth: true });
});
afterAll(async () => {
  await h?.close();
});

async function remember() {
  const inst = await h.app.store.installations.get(TEAM);
  for (const t of [inst?.bot?.token, inst?.bot?.refreshToken]) if (t) tokens.add(t);
  return inst;
}

/** The install page → the emulator's authorize page → our callback, with the state tampered. */
async function installWithState(tamper: (state: string) => string, withCookie: boolean) {
  const origin = h.app.origin;
  const page = await fetch(`${origin}/slack/install`, { redirect: "manual" });
  const cookie = page.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  const html = await page.text();
  const href =
    page.headers.get("location") ?? /href="([^"]*oauth\/v2\/authorize[^"]*)"/.exec(html)?.[1];
  if (!href) throw new Error("the install page links to no authorize URL");
  const authorize = new URL(href.replaceAll("&amp;", "&"));
  const state = authorize.searchParams.get("state") ?? "";
  expect(state).not.toBe("");
  authorize.searchParams.set("state", tamper(state));
  const auth = await fetch(authorize, { redirect: "manual" });
  const callback = auth.headers.get("location");
  if (!callback) throw new Error(`the emulator did not redirect (HTTP ${auth.status})`);
  const res = await fetch(callback, {
    redirect: "manual",
    headers: withCookie && cookie ? { cookie } : {},
  });
  return { status: res.status, body: await res.text() };
}

describe("OAuth install", () => {
  it("refuses a forged or foreign state and stores nothing", async () => {
    const forged = await installWithState((s) => `${s.slice(0, -4)}AAAA`, true);
    expect(forged.status).toBe(400);
    expect(forged.body).toContain("slack_oauth_invalid_state");
    // A state minted for another browser: no cookie to bind it.
    const foreign = await installWithState((s) => s, false);
    expect(foreign.status).toBe(400);
    expect(foreign.body).toMatch(/slack_oauth_(invalid|missing)_state/);
    expect(await h.app.store.installations.get(TEAM)).toBeUndefined();
  });

  it("installs with a good state and keeps the bot token encrypted at rest", async () => {
    const r = await h.driver.oauthInstall();
    expect(r.callback.status).toBe(200);
    const inst = await remember();
    expect(inst?.team?.id).toBe(TEAM);
    expect(inst?.bot?.token).toMatch(/^xoxb-/);
    const raw = JSON.stringify(await h.app.store.get(`install:${TEAM}`));
    expect(raw).not.toContain(inst?.bot?.token ?? "missing");
    // The installed workspace works: a command is authorized with the stored token.
    const since = h.emulator.calls.length;
    await h.driver.slashCommand({ user: USERS.member, channel: CHANNELS.general, text: "help" });
    const answer = await h.emulator.waitForCall((c) => c.method === "response_url", { since });
    expect(String(answer.args.text)).toContain("/onair link");
  });

  it("keeps a long-lived install working, and moves it over with oauth.v2.exchange once Slack rotates", async () => {
    // Slack has rotation off for the app: the exchange is refused and the token stays.
    await h.emulator.waitForCall(
      (c) => c.method === "oauth.v2.exchange" && c.error === "token_rotation_not_enabled",
      { timeoutMs: 5_000 },
    );
    const before = await remember();
    expect(before?.bot?.token).toMatch(/^xoxb-/);
    const since = h.emulator.calls.length;
    await h.driver.slashCommand({ user: USERS.member, channel: CHANNELS.general, text: "help" });
    await h.emulator.waitForCall((c) => c.method === "response_url", { since });

    // Rotation turned on; a day later (when the app asks again) the token is moved over.
    h.emulator.setTokenRotation({ expiresInSec: 600 });
    const stored = (await h.app.store.installations.get(TEAM)) as unknown as Record<
      string,
      unknown
    >;
    delete stored.rotationExchangeRefusedAt;
    await h.app.store.installations.put(TEAM, stored as never);
    const since2 = h.emulator.calls.length;
    await h.driver.slashCommand({ user: USERS.member, channel: CHANNELS.general, text: "help" });
    const moved = await h.emulator.waitForCall((c) => c.method === "oauth.v2.exchange" && c.ok, {
      since: since2,
      timeoutMs: 5_000,
    });
    expect(moved.ok).toBe(true);
    await expect.poll(async () => (await remember())?.bot?.token).toMatch(/^xoxe\.xoxb-/);
    const after = await remember();
    expect(after?.bot?.refreshToken).toMatch(/^xoxe-1-/);
    expect(after?.bot?.expiresAt).toBeGreaterThan(Date.now() / 1000);
    // Exchanged once: the schedule does not ask again.
    await new Promise((r) => setTimeout(r, 500));
    expect(h.emulator.calls.filter((c) => c.method === "oauth.v2.exchange" && c.ok)).toHaveLength(
      1,
    );
    h.emulator.setTokenRotation(undefined);
  });

  it("rotates tokens: keeps the refresh token and refreshes once for a burst of requests", async () => {
    h.emulator.setTokenRotation({ expiresInSec: 600 });
    const r = await h.driver.oauthInstall();
    expect(r.callback.status).toBe(200);
    const first = await remember();
    expect(first?.bot?.refreshToken).toMatch(/^xoxe-/);
    expect(first?.bot?.expiresAt).toBeGreaterThan(Date.now() / 1000);
    const raw = JSON.stringify(await h.app.store.get(`install:${TEAM}`));
    expect(raw).not.toContain(first?.bot?.refreshToken ?? "missing");

    // Nothing is due yet (a refresh comes in the last quarter of a token's life): as if time had
    // passed, the stored expiry is brought within that quarter, so the next request refreshes it.
    // The first refresh is held back a second (429 + Retry-After) so the whole burst overlaps it.
    const stored = await h.app.store.installations.get(TEAM);
    if (!stored?.bot) throw new Error("no installation");
    await h.app.store.installations.put(TEAM, {
      ...stored,
      bot: { ...stored.bot, expiresAt: Math.floor(Date.now() / 1000) + 60 },
    });
    h.emulator.throttle({ method: "oauth.v2.access", times: 1, retryAfterSec: 1 });
    const since = h.emulator.calls.length;
    const burst = await Promise.all(
      Array.from({ length: 5 }, () =>
        h.driver.slashCommand({ user: USERS.member, channel: CHANNELS.general, text: "help" }),
      ),
    );
    expect(burst.map((b) => b.status)).toEqual([200, 200, 200, 200, 200]);
    await expect
      .poll(() => h.emulator.calls.slice(since).filter((c) => c.method === "response_url").length)
      .toBe(5);
    const refreshes = h.emulator.calls
      .slice(since)
      .filter((c) => c.method === "oauth.v2.access" && c.args.grant_type === "refresh_token");
    expect(refreshes.filter((c) => c.ok)).toHaveLength(1);

    const rotated = await remember();
    expect(rotated?.bot?.token).not.toBe(first?.bot?.token);
    // Slack returns a new refresh token with each refresh (the reference), and the one spent is dead.
    expect(rotated?.bot?.refreshToken).toMatch(/^xoxe-1-/);
    expect(rotated?.bot?.refreshToken).not.toBe(first?.bot?.refreshToken);
    // Bulk posting uses the rotated token too.
    const bulk = await h.app.deps.bulkClient(TEAM);
    const posted = await bulk.chat.postMessage({
      channel: CHANNELS.events,
      text: "rotation works",
    });
    expect(posted.ok).toBe(true);
    h.emulator.setTokenRotation(undefined);
  });

  it("after a refused refresh: posting stops there, and admins read what to do on App Home", async () => {
    const stored = (await h.app.store.installations.get(TEAM)) as unknown as Record<
      string,
      unknown
    >;
    await h.app.store.installations.put(TEAM, {
      ...stored,
      rotationRefusedAt: Date.now(),
    } as never);
    await expect(h.app.deps.bulkClient(TEAM)).rejects.toBeInstanceOf(NoInstallationError);
    // Slack requests are still served while the old token lasts: the admin's Home says it.
    const since = h.emulator.calls.length;
    await h.driver.event({ type: "app_home_opened", user: USERS.admin });
    const home = await h.emulator.waitForCall(
      (c) => c.method === "views.publish" && c.args.user_id === USERS.admin,
      { since, timeoutMs: 5_000 },
    );
    expect(JSON.stringify(home.args.view)).toContain(ROTATION_REFUSED_TEXT.slice(0, 60));
    const since2 = h.emulator.calls.length;
    await h.driver.event({ type: "app_home_opened", user: USERS.member });
    const member = await h.emulator.waitForCall(
      (c) => c.method === "views.publish" && c.args.user_id === USERS.member,
      { since: since2, timeoutMs: 5_000 },
    );
    expect(JSON.stringify(member.args.view)).not.toContain("refused to renew");
    // Installing again brings it back.
    const r = await h.driver.oauthInstall();
    expect(r.callback.status).toBe(200);
    expect((await h.app.deps.bulkClient(TEAM)).token).toBeDefined();
  });

  it("leaks no token or secret into logs or Slack messages", () => {
    const scan = createSecretScanner();
    for (const line of h.logs) scan.add("log", line);
    for (const c of h.emulator.calls) scan.add(`slack ${c.method}`, JSON.stringify(c));
    scan.assertNoSecrets([...h.secrets, ...tokens]);
  });
});
