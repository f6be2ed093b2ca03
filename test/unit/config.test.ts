import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.ts";

const KEY = Buffer.alloc(32, 7).toString("base64");
const slackEnv = {
  SLACK_BOT_TOKEN: "xoxb-1-2-3",
  SLACK_SIGNING_SECRET: "s3cr3t-signing",
  ONAIR_ENCRYPTION_KEY: KEY,
  RELAY_BASE_URL: "https://relay.example.com",
  EVENTS_BASE_URL: "https://events.example.com",
  PUBLIC_URL: "https://onair.example.com",
};

function problem(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error("loadConfig accepted a bad environment");
}

describe("loadConfig", () => {
  it("gives the documented defaults with an empty environment (playground)", () => {
    const c = loadConfig({});
    expect(c.mode).toBe("playground");
    expect(c.port).toBe(3000);
    expect(c.publicUrl).toBe("http://localhost:3000");
    expect(c.store).toEqual({ url: "sqlite://data/onair.sqlite", kind: "sqlite" });
    expect(c.encryptionKey).toBeUndefined();
    expect(c.upstream).toEqual({
      relayBaseUrl: undefined,
      eventsBaseUrl: undefined,
      sandbox: true,
    });
    expect(c.logLevel).toBe("info");
    expect(c.slack.apiUrl).toBeUndefined();
  });

  it("treats empty strings as unset", () => {
    const c = loadConfig({ PORT: "", SLACK_BOT_TOKEN: " ", STORE_URL: "", LOG_LEVEL: "" });
    expect(c.mode).toBe("playground");
    expect(c.port).toBe(3000);
  });

  it("derives PUBLIC_URL from PORT and strips trailing slashes", () => {
    expect(loadConfig({ PORT: "4100" }).publicUrl).toBe("http://localhost:4100");
    expect(loadConfig({ PUBLIC_URL: "https://onair.example.com/" }).publicUrl).toBe(
      "https://onair.example.com",
    );
  });

  it("enters Slack mode with a bot token, and with OAuth", () => {
    expect(loadConfig(slackEnv).mode).toBe("slack");
    const c = loadConfig({
      SLACK_CLIENT_ID: "1.2",
      SLACK_CLIENT_SECRET: "cs",
      SLACK_STATE_SECRET: "ss",
      SLACK_SIGNING_SECRET: "s3cr3t-signing",
      ONAIR_ENCRYPTION_KEY: KEY,
      ONAIR_SANDBOX: "1",
    });
    expect(c.mode).toBe("slack");
    expect(c.slack.oauth).toEqual({ clientId: "1.2", clientSecret: "cs", stateSecret: "ss" });
    expect(c.encryptionKey?.length).toBe(32);
  });

  it("with Slack credentials serves the sandbox only when ONAIR_SANDBOX=1 asks for it", () => {
    const { RELAY_BASE_URL: _r, EVENTS_BASE_URL: _e, ...noUpstream } = slackEnv;
    const refused = problem(noUpstream);
    expect(refused.variable).toBe("RELAY_BASE_URL");
    expect(refused.message).toMatch(/RELAY_BASE_URL and EVENTS_BASE_URL.*ONAIR_SANDBOX=1/);
    expect(problem({ ...noUpstream, RELAY_BASE_URL: "https://relay.example.com" }).variable).toBe(
      "EVENTS_BASE_URL",
    );
    expect(loadConfig({ ...noUpstream, ONAIR_SANDBOX: "1" }).upstream.sandbox).toBe(true);
    expect(loadConfig(slackEnv).upstream.sandbox).toBe(false);
    expect(problem({ ...slackEnv, ONAIR_SANDBOX: "yes" }).variable).toBe("ONAIR_SANDBOX");
  });

  it("keeps SLACK_API_URL with one trailing slash", () => {
    expect(loadConfig({ SLACK_API_URL: "http://127.0.0.1:9/api" }).slack.apiUrl).toBe(
      "http://127.0.0.1:9/api/",
    );
  });

  it.each([
    ["PORT", { PORT: "abc" }],
    ["PORT", { PORT: "70000" }],
    ["PORT", { PORT: "-1" }],
    ["PUBLIC_URL", { PUBLIC_URL: "not a url" }],
    ["PUBLIC_URL", { PUBLIC_URL: "ftp://x.example.com" }],
    ["SLACK_API_URL", { SLACK_API_URL: "localhost:3000" }],
    ["RELAY_BASE_URL", { RELAY_BASE_URL: "relay" }],
    ["EVENTS_BASE_URL", { EVENTS_BASE_URL: "http://x.example.com/?a=1" }],
    ["STORE_URL", { STORE_URL: "mysql://x" }],
    ["STORE_URL", { STORE_URL: "sqlite://" }],
    ["STORE_URL", { STORE_URL: "sqlite://:memory:" }],
    ["LOG_LEVEL", { LOG_LEVEL: "loud" }],
    ["ONAIR_ENCRYPTION_KEY", { ONAIR_ENCRYPTION_KEY: "c2hvcnQ=" }],
    ["ONAIR_ENCRYPTION_KEY", { ONAIR_ENCRYPTION_KEY: "not base64!!" }],
    ["ONAIR_ENCRYPTION_KEY_PREVIOUS", { ...slackEnv, ONAIR_ENCRYPTION_KEY_PREVIOUS: "c2hvcnQ=" }],
    ["ONAIR_ENCRYPTION_KEY_PREVIOUS", { ...slackEnv, ONAIR_ENCRYPTION_KEY_PREVIOUS: KEY }],
    ["SLACK_SIGNING_SECRET", { SLACK_BOT_TOKEN: "xoxb-1", ONAIR_ENCRYPTION_KEY: KEY }],
    ["SLACK_SIGNING_SECRET", { ...slackEnv, SLACK_SIGNING_SECRET: "short" }],
    ["ONAIR_ENCRYPTION_KEY", { SLACK_BOT_TOKEN: "xoxb-1", SLACK_SIGNING_SECRET: "s3cr3t-signing" }],
    ["SLACK_BOT_TOKEN", { ...slackEnv, SLACK_BOT_TOKEN: "not-a-token" }],
    ["SLACK_CLIENT_SECRET", { SLACK_CLIENT_ID: "1.2", SLACK_STATE_SECRET: "s" }],
    [
      "SLACK_BOT_TOKEN",
      { ...slackEnv, SLACK_CLIENT_ID: "1", SLACK_CLIENT_SECRET: "2", SLACK_STATE_SECRET: "3" },
    ],
  ] as const)("names %s when it is wrong (%j)", (variable, env) => {
    const err = problem(env);
    expect(err.variable).toBe(variable);
    expect(err.message.startsWith(variable)).toBe(true);
    expect(err.message).not.toContain("\n");
  });

  it("reports every bad variable at once, the first one first", () => {
    const err = problem({
      PORT: "abc",
      SLACK_BOT_TOKEN: "not-a-token",
      STORE_URL: "mysql://x",
      LOG_LEVEL: "loud",
      ONAIR_ENCRYPTION_KEY: "c2hvcnQ=",
    });
    expect(err.problems.map((p) => p.variable)).toEqual([
      "PORT",
      "SLACK_BOT_TOKEN",
      "SLACK_SIGNING_SECRET",
      "STORE_URL",
      "ONAIR_ENCRYPTION_KEY",
      "RELAY_BASE_URL",
      "LOG_LEVEL",
    ]);
    expect(err.variable).toBe("PORT");
    for (const p of err.problems) expect(p.message).not.toContain("\n");
  });

  it("refuses services elsewhere with a PUBLIC_URL only this machine reaches", () => {
    const { PUBLIC_URL: _p, ...noPublic } = slackEnv;
    for (const env of [
      noPublic,
      { ...slackEnv, PUBLIC_URL: "http://localhost:3000" },
      { ...slackEnv, PUBLIC_URL: "http://127.0.0.1:3000" },
      { ...slackEnv, PUBLIC_URL: "http://[::1]:3000" },
      { ...noPublic, EVENTS_BASE_URL: "http://127.0.0.1:4000/events" },
    ]) {
      const err = problem(env);
      expect(err.variable).toBe("PUBLIC_URL");
      expect(err.problems).toHaveLength(1);
      expect(err.message).toMatch(/^PUBLIC_URL .*set PUBLIC_URL to the address/);
    }
    // Both services on this machine (a sandbox, a test): a loopback PUBLIC_URL reaches them.
    expect(
      loadConfig({
        ...noPublic,
        RELAY_BASE_URL: "http://127.0.0.1:4000/relay",
        EVENTS_BASE_URL: "http://localhost:4000/events",
      }).publicUrl,
    ).toBe("http://localhost:3000");
    const { RELAY_BASE_URL: _r, EVENTS_BASE_URL: _e, ...sandboxed } = noPublic;
    expect(loadConfig({ ...sandboxed, ONAIR_SANDBOX: "1" }).publicUrl).toBe(
      "http://localhost:3000",
    );
  });

  it("takes METRICS_TOKEN when long enough", () => {
    expect(loadConfig(slackEnv).metricsToken).toBeUndefined();
    const token = "m".repeat(32);
    expect(loadConfig({ ...slackEnv, METRICS_TOKEN: token }).metricsToken).toBe(token);
    expect(problem({ ...slackEnv, METRICS_TOKEN: "short" }).variable).toBe("METRICS_TOKEN");
  });

  it("never echoes a URL it cannot parse: it may carry a password", () => {
    const err = problem({ EVENTS_BASE_URL: "https://svc:hunter2-pw@events example.com" });
    expect(err.variable).toBe("EVENTS_BASE_URL");
    expect(err.message).not.toContain("hunter2");
  });

  it("takes the previous key beside the current one while rotating", () => {
    const previous = Buffer.alloc(32, 9);
    const c = loadConfig({
      ...slackEnv,
      ONAIR_ENCRYPTION_KEY_PREVIOUS: previous.toString("base64"),
    });
    expect(c.previousEncryptionKey?.equals(previous)).toBe(true);
    expect(loadConfig(slackEnv).previousEncryptionKey).toBeUndefined();
  });

  it("never echoes a secret value in its message", () => {
    const err = problem({ ...slackEnv, SLACK_BOT_TOKEN: "zzz-very-secret-token" });
    expect(err.message).not.toContain("very-secret");
    const err2 = problem({ STORE_URL: "mysql://user:hunter2@db" });
    expect(err2.message).not.toContain("hunter2");
  });
});
