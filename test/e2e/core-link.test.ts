import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { userTokenKey } from "../../src/upstream/events/tokens.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { createSecretScanner } from "../helpers/secrets.ts";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

/** Runs `/onair <text>` and returns what the app answered through the response_url. */
async function command(user: string, text: string): Promise<string> {
  const since = h.emulator.calls.length;
  const res = await h.driver.slashCommand({ user, channel: CHANNELS.general, text });
  expect(res.status).toBe(200);
  const call = await h.emulator.waitForCall((c) => c.method === "response_url", {
    since,
    timeoutMs: 5_000,
  });
  expect(call.args.response_type).toBe("ephemeral");
  return String(call.args.text);
}

describe("/onair link, whoami, unlink", () => {
  it("help lists link, unlink and whoami", async () => {
    const text = await command(USERS.member, "help");
    for (const sub of ["link", "unlink", "whoami", "settings"])
      expect(text).toContain(`/onair ${sub}`);
  });

  it("links a registered e-mail and stores the upstream ids", async () => {
    const text = await command(USERS.omar, "link");
    expect(text).toContain("You're linked to the events account of omar@example.com");
    const link = await h.app.store.users.get(TEAM, USERS.omar);
    expect(link).toMatchObject({ email: "omar@example.com", enterpriseId: 1001 });
    expect(typeof link?.userId).toBe("number");
    const grants = h.sandbox.control
      .log()
      .filter((e) => e.service === "events" && e.grantType === "user_app");
    expect(grants.length).toBeGreaterThan(0);
  });

  it("answers plainly when the Slack e-mail is not an upstream user, and links nothing", async () => {
    const ws = h.emulator.workspace;
    const mia = ws.users.get(USERS.member);
    if (!mia) throw new Error("no member in the seed");
    // Not this app's text either: escaped, the address pings nobody.
    ws.users.set(mia.id, { ...mia, email: "mia&<!here>@elsewhere.org" });
    const text = await command(USERS.member, "link");
    expect(text).toBe(
      "mia&amp;&lt;!here&gt;@elsewhere.org is not a registered user of your live events service. Ask your events admin to add you, then run `/onair link` again.",
    );
    expect(await h.app.store.users.get(TEAM, USERS.member)).toBeUndefined();
    const notLinked = await command(USERS.member, "whoami");
    expect(notLinked).toContain("You're not linked to an events account yet. Run `/onair link`");

    // Commands that need the link answer the same, without asking the service each time for a
    // minute; `/onair link` asks again (the member may just have been added).
    const grants = () =>
      h.sandbox.control.log().filter((e) => e.service === "events" && e.grantType === "user_app")
        .length;
    const before = grants();
    for (let i = 0; i < 3; i++) {
      expect(await command(USERS.member, "list")).toContain("is not a registered user");
    }
    expect(grants()).toBe(before);
    expect(await command(USERS.member, "link")).toContain("is not a registered user");
    expect(grants()).toBe(before + 1);
  });

  it("whoami shows the linked account and mints nothing (no token appears in the relay's list)", async () => {
    const before = await h.app.deps.relay.listAccessTokens({
      username: "sandbox",
      password: "sandbox",
    });
    const member = await command(USERS.omar, "whoami");
    expect(member).toContain("omar@example.com");
    expect(member).not.toContain("/onair settings");
    await command(USERS.admin, "link");
    const admin = await command(USERS.admin, "whoami");
    expect(admin).toContain("ada@example.com");
    expect(admin).toContain("`/onair settings` → Check");
    const after = await h.app.deps.relay.listAccessTokens({
      username: "sandbox",
      password: "sandbox",
    });
    expect(after.length).toBe(before.length);
  });

  it("unlink forgets the link and the user's cached token", async () => {
    const key = userTokenKey(TEAM, "omar@example.com");
    expect(await h.app.store.tokens.cache.get(key)).toBeDefined();
    const text = await command(USERS.omar, "unlink");
    expect(text).toContain("I've forgotten the link to omar@example.com");
    expect(await h.app.store.users.get(TEAM, USERS.omar)).toBeUndefined();
    expect(await h.app.store.tokens.cache.get(key)).toBeUndefined();
    expect(await command(USERS.omar, "unlink")).toContain("You're not linked");
  });

  it("leaks no secret into logs or Slack calls", async () => {
    const minted = await h.app.deps.relay.listAccessTokens({
      username: "sandbox",
      password: "sandbox",
    });
    const relayTokens = minted.map((t) => t.accessToken);
    const adaToken = await h.app.store.tokens.cache.get(userTokenKey(TEAM, "ada@example.com"));
    expect(adaToken).toBeDefined();
    const scan = createSecretScanner();
    for (const line of h.logs) scan.add("log", line);
    for (const c of h.emulator.calls) scan.add(`slack ${c.method}`, JSON.stringify(c));
    scan.assertNoSecrets([
      ...h.secrets,
      "sandbox-secret",
      adaToken?.accessToken ?? "missing",
      ...relayTokens,
    ]);
  });
});
