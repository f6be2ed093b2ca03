import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { WebClient } from "@slack/web-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_USERS, type SlackEmulator, startSlackEmulator } from "../src/index.ts";
import { authorize } from "../src/oauth.ts";
import { ALL_TEST_SCOPES, quietLogger } from "./helpers.ts";

/**
 * An Enterprise organization with two workspaces and the app installed org-wide, and people of
 * another organization and guests: the payloads and answers as Slack shapes them.
 */

const ORG = "E0ORG";
const SECOND = "T0SECOND";
const SAM = "U0SAM";
const PAT = "U0PAT";
const GUS = "U0GUS";

let emu: SlackEmulator;
let received: Array<Record<string, unknown>> = [];
let close: () => Promise<void>;

beforeAll(async () => {
  // A stand-in app that records what Slack sends and acknowledges it.
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString();
      const form = new URLSearchParams(raw);
      const payload = form.get("payload");
      received.push(
        String(req.headers["content-type"]).includes("json")
          ? JSON.parse(raw)
          : payload
            ? JSON.parse(payload)
            : Object.fromEntries(form),
      );
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  close = () => new Promise<void>((r) => server.close(() => r()));
  emu = await startSlackEmulator({
    signingSecret: "org-test-secret",
    appUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    rateLimits: false,
    seed: {
      botScopes: ALL_TEST_SCOPES,
      enterprise: {
        id: ORG,
        name: "Org",
        teams: [{ id: SECOND, name: "Second", domain: "second" }],
      },
      orgInstall: true,
      users: [
        ...DEFAULT_USERS,
        {
          id: SAM,
          name: "sam",
          real_name: "Sam",
          tz: "UTC",
          email: "sam@example.com",
          team_id: SECOND,
        },
        {
          id: PAT,
          name: "pat",
          real_name: "Pat",
          tz: "UTC",
          email: "pat@example.com",
          team_id: "T0PARTNER",
          is_admin: true,
        },
        {
          id: GUS,
          name: "gus",
          real_name: "Gus",
          tz: "UTC",
          email: "gus@example.com",
          is_ultra_restricted: true,
        },
      ],
    },
  });
});

afterAll(async () => {
  await emu?.close();
  await close?.();
});

describe("an org-wide install", () => {
  it("installs for the org: team null, the enterprise, is_enterprise_install", async () => {
    const code = authorize(emu.workspace, {
      clientId: emu.clientId,
      scopes: ["chat:write"],
      userScopes: [],
      redirectUri: undefined,
    });
    const r = await new WebClient(undefined, {
      slackApiUrl: emu.apiUrl,
      logger: quietLogger,
    }).oauth.v2.access({ client_id: emu.clientId, client_secret: emu.clientSecret, code });
    expect(r.team).toBeNull();
    expect(r.enterprise).toEqual({ id: ORG, name: "Org" });
    expect(r.is_enterprise_install).toBe(true);
  });

  it("sends each person's own workspace: commands, interactions, views and events", async () => {
    received = [];
    await emu.driver.slashCommand({ user: SAM, channel: "C0GENERAL", text: "help" });
    const cmd = received.at(-1) as Record<string, string>;
    expect(cmd).toMatchObject({
      team_id: SECOND,
      enterprise_id: ORG,
      is_enterprise_install: "true",
    });

    const bot = new WebClient(emu.botToken, { slackApiUrl: emu.apiUrl, logger: quietLogger });
    const trigger = emu.workspace.issueTriggerId(SAM);
    await bot.views.open({
      trigger_id: trigger,
      view: {
        type: "modal",
        callback_id: "form",
        title: { type: "plain_text", text: "Form" },
        submit: { type: "plain_text", text: "Save" },
        blocks: [
          {
            type: "input",
            block_id: "t",
            label: { type: "plain_text", text: "T" },
            element: { type: "plain_text_input", action_id: "t" },
          },
        ],
      },
    });
    await emu.driver.viewSubmission({ user: SAM, values: { t: "x" } });
    const sub = received.at(-1) as {
      team: unknown;
      enterprise: { id: string };
      is_enterprise_install: boolean;
      user: { team_id: string };
      view: { app_installed_team_id: string };
    };
    expect(sub.team).toBeNull();
    expect(sub.enterprise.id).toBe(ORG);
    expect(sub.is_enterprise_install).toBe(true);
    expect(sub.user.team_id).toBe(SECOND);
    expect(sub.view.app_installed_team_id).toBe(ORG);

    await emu.driver.event({ type: "app_home_opened", user: SAM });
    const ev = received.at(-1) as {
      team_id: string;
      context_team_id: string;
      authorizations: Array<{
        team_id: unknown;
        enterprise_id: string;
        is_enterprise_install: boolean;
      }>;
    };
    expect(ev.team_id).toBe(SECOND);
    expect(ev.context_team_id).toBe(SECOND);
    expect(ev.authorizations[0]).toMatchObject({
      team_id: null,
      enterprise_id: ORG,
      is_enterprise_install: true,
    });
  });

  it("uninstalls one workspace (the org's tokens stay) or the whole org", async () => {
    received = [];
    await emu.driver.uninstall({ team: SECOND });
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ team_id: SECOND, context_team_id: SECOND });
    const bot = new WebClient(emu.botToken, { slackApiUrl: emu.apiUrl, logger: quietLogger });
    expect((await bot.auth.test()).ok).toBe(true);
    received = [];
    await emu.driver.uninstall();
    expect(received.map((r) => (r.event as { type: string }).type)).toEqual([
      "app_uninstalled",
      "tokens_revoked",
    ]);
    for (const r of received) {
      expect(r.team_id).toBe(ORG);
      expect(r.context_team_id).toBeUndefined();
    }
  });
});

describe("people of another organization and guests", () => {
  it("users.info gives their own team and guest flags", async () => {
    const code = authorize(emu.workspace, {
      clientId: emu.clientId,
      scopes: ["users:read"],
      userScopes: [],
      redirectUri: undefined,
    });
    const r = await new WebClient(undefined, {
      slackApiUrl: emu.apiUrl,
      logger: quietLogger,
    }).oauth.v2.access({
      client_id: emu.clientId,
      client_secret: emu.clientSecret,
      code,
    });
    const web = new WebClient(r.access_token, { slackApiUrl: emu.apiUrl, logger: quietLogger });
    const pat = (await web.users.info({ user: PAT })).user;
    expect(pat?.team_id).toBe("T0PARTNER");
    expect(pat?.is_admin).toBe(true);
    const gus = (await web.users.info({ user: GUS })).user;
    expect(gus?.is_ultra_restricted).toBe(true);
    expect(gus?.is_restricted).toBe(false);
  });
});
