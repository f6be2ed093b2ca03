import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { App, type Installation, type InstallationQuery, verifySlackRequest } from "@slack/bolt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Forgery, signSlackRequest } from "../src/driver/index.ts";
import { type SlackEmulator, startSlackEmulator } from "../src/index.ts";
import { ALL_TEST_SCOPES, quietLogger } from "./helpers.ts";

// The driver plays Slack towards a real Bolt app over real HTTP; signatures are checked with
// Bolt's own verifier.

const SECRET = "driver-test-signing-secret";
const OMAR = "U0OMAR0ORG";
const KEI = "U0KEI0ORG";
const EVENTS = "C0EVENTS";

function urlOf(server: Server): string {
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function readRaw(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

describe("signatures", () => {
  let emu: SlackEmulator;
  let capture: Server;
  const seen: { headers: IncomingMessage["headers"]; body: string }[] = [];

  beforeAll(async () => {
    capture = createServer((req, res) => {
      readRaw(req).then((body) => {
        seen.push({ headers: req.headers, body });
        res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
      });
    });
    await new Promise<void>((r) => capture.listen(0, "127.0.0.1", r));
    emu = await startSlackEmulator({
      signingSecret: SECRET,
      appUrl: urlOf(capture),
      seed: { botScopes: ALL_TEST_SCOPES },
    });
  });

  afterAll(async () => {
    await emu.close();
    await new Promise((r) => capture.close(r));
  });

  function verify(i: number, nowMilliseconds = Date.now()): void {
    const req = seen[i]!;
    verifySlackRequest({
      signingSecret: SECRET,
      body: req.body,
      headers: {
        "x-slack-signature": req.headers["x-slack-signature"] as string,
        "x-slack-request-timestamp": Number(req.headers["x-slack-request-timestamp"]),
      },
      nowMilliseconds,
    });
  }

  it("signs every kind of request the way Bolt verifies", async () => {
    const d = emu.driver;
    await d.slashCommand({ user: "omar", channel: "#events", text: "help" });
    await d.shortcut({ callback_id: "schedule", user: OMAR });
    await d.event({ type: "app_home_opened", user: OMAR });
    await d.urlVerification("abc");
    expect(seen).toHaveLength(4);
    for (let i = 0; i < seen.length; i++) verify(i);
    expect(seen[0]!.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    expect(seen[2]!.headers["content-type"]).toBe("application/json");
    const ts = Number(seen[0]!.headers["x-slack-request-timestamp"]);
    expect(seen[0]!.headers["x-slack-signature"]).toBe(signSlackRequest(SECRET, ts, seen[0]!.body));
  });

  it("forges requests that Bolt's verifier refuses", async () => {
    const refused: Forgery[] = [
      "bad-signature",
      "stale-timestamp",
      "tampered-body",
      "no-signature",
      "no-timestamp",
    ];
    for (const forge of refused) {
      const before = seen.length;
      await emu.driver.slashCommand({ user: OMAR, channel: EVENTS, text: "x", forge });
      expect(() => verify(before), forge).toThrow();
    }
    // Six minutes ahead: signed correctly for a time the app's clock has not reached.
    const before = seen.length;
    await emu.driver.slashCommand({
      user: OMAR,
      channel: EVENTS,
      text: "x",
      forge: "future-timestamp",
    });
    const future = seen[before]!;
    const ahead =
      Number(future.headers["x-slack-request-timestamp"]) - Math.floor(Date.now() / 1000);
    expect(ahead).toBeGreaterThanOrEqual(359);
    expect(ahead).toBeLessThanOrEqual(361);
  });
});

describe("a Bolt app driven end to end", () => {
  let emu: SlackEmulator;
  let app: App;
  let server: Server;
  const got: Record<string, unknown[]> = {};
  const note = (k: string, v: unknown) => {
    got[k] = [...(got[k] ?? []), v];
  };

  const scheduleModal = {
    type: "modal" as const,
    callback_id: "schedule",
    notify_on_close: true,
    title: { type: "plain_text" as const, text: "Schedule" },
    submit: { type: "plain_text" as const, text: "Schedule" },
    blocks: [
      {
        type: "input",
        block_id: "title",
        label: { type: "plain_text", text: "Title" },
        element: { type: "plain_text_input", action_id: "value", max_length: 100 },
      },
      {
        type: "input",
        block_id: "start",
        label: { type: "plain_text", text: "Start" },
        element: { type: "datetimepicker", action_id: "value" },
      },
      {
        type: "input",
        block_id: "day",
        optional: true,
        label: { type: "plain_text", text: "Day" },
        element: { type: "datepicker", action_id: "value", initial_date: "2025-02-01" },
      },
      {
        type: "input",
        block_id: "at",
        optional: true,
        label: { type: "plain_text", text: "At" },
        element: { type: "timepicker", action_id: "value" },
      },
      {
        type: "input",
        block_id: "tz",
        label: { type: "plain_text", text: "Zone" },
        element: {
          type: "static_select",
          action_id: "value",
          options: ["America/New_York", "Europe/Berlin"].map((z) => ({
            text: { type: "plain_text", text: z },
            value: z,
          })),
        },
      },
      {
        type: "input",
        block_id: "panelists",
        label: { type: "plain_text", text: "Panelists" },
        element: { type: "multi_users_select", action_id: "value" },
      },
      {
        type: "input",
        block_id: "notify",
        label: { type: "plain_text", text: "Channel" },
        element: { type: "conversations_select", action_id: "value", response_url_enabled: true },
      },
      {
        type: "input",
        block_id: "audit",
        optional: true,
        label: { type: "plain_text", text: "Audit" },
        element: { type: "channels_select", action_id: "value" },
      },
      {
        type: "input",
        block_id: "flags",
        optional: true,
        label: { type: "plain_text", text: "Flags" },
        element: {
          type: "checkboxes",
          action_id: "value",
          options: ["enableChat", "enableQna"].map((f) => ({
            text: { type: "plain_text", text: f },
            value: f,
          })),
        },
      },
      {
        type: "input",
        block_id: "kind",
        label: { type: "plain_text", text: "Kind" },
        element: {
          type: "radio_buttons",
          action_id: "value",
          initial_option: { text: { type: "plain_text", text: "webinar" }, value: "webinar" },
          options: ["webinar", "town hall"].map((k) => ({
            text: { type: "plain_text", text: k },
            value: k,
          })),
        },
      },
      {
        type: "input",
        block_id: "count",
        optional: true,
        label: { type: "plain_text", text: "Occurrences" },
        element: {
          type: "number_input",
          action_id: "value",
          is_decimal_allowed: false,
          min_value: "1",
        },
      },
      {
        type: "actions",
        block_id: "recurrence",
        elements: [
          {
            type: "static_select",
            action_id: "recurrence",
            options: ["none", "DAILY"].map((r) => ({
              text: { type: "plain_text", text: r },
              value: r,
            })),
          },
        ],
      },
    ],
  };

  beforeAll(async () => {
    emu = await startSlackEmulator({ signingSecret: SECRET, seed: { botScopes: ALL_TEST_SCOPES } });
    app = new App({
      signingSecret: SECRET,
      token: emu.botToken,
      clientOptions: { slackApiUrl: emu.apiUrl, retryConfig: { retries: 0 } },
      logger: quietLogger,
    });
    app.command("/onair", async ({ ack, body, client }) => {
      note("command", body);
      if (body.text === "help") {
        await ack({ text: "Try /onair schedule" });
      } else if (body.text === "schedule") {
        await ack();
        await client.views.open({ trigger_id: body.trigger_id, view: scheduleModal });
      } else {
        await ack();
        await client.chat.postMessage({
          channel: body.channel_id,
          text: "Town hall",
          blocks: [
            { type: "section", text: { type: "mrkdwn", text: "*Town hall*" } },
            {
              type: "actions",
              elements: [
                {
                  type: "button",
                  action_id: "cancel",
                  value: "evt-1",
                  text: { type: "plain_text", text: "Cancel" },
                },
              ],
            },
          ],
        });
      }
    });
    app.action("cancel", async ({ ack, respond, action }) => {
      await ack();
      note("cancel", action);
      await respond({
        replace_original: true,
        text: `Cancelled ${(action as { value: string }).value}`,
      });
    });
    app.action("recurrence", async ({ ack, body, client }) => {
      await ack();
      note("recurrence", body);
      const view = (body as { view: { id: string; hash: string } }).view;
      await client.views.update({
        view_id: view.id,
        hash: view.hash,
        view: { ...scheduleModal, title: { type: "plain_text", text: "Schedule daily" } },
      });
    });
    app.view("schedule", async ({ ack, view, body }) => {
      note("submission", body);
      const title = view.state.values.title?.value?.value;
      if (title === "bad")
        await ack({ response_action: "errors", errors: { title: "Give it a real name" } });
      else await ack();
    });
    app.view({ callback_id: "schedule", type: "view_closed" }, async ({ ack, body }) => {
      await ack();
      note("closed", body);
    });
    app.shortcut("schedule_shortcut", async ({ ack, shortcut, client }) => {
      await ack();
      await client.views.open({ trigger_id: shortcut.trigger_id, view: scheduleModal });
    });
    app.event("app_home_opened", async ({ event, client, context }) => {
      note("home", { event, retryNum: context.retryNum });
      await client.views.publish({
        user_id: event.user,
        view: {
          type: "home",
          blocks: [{ type: "section", text: { type: "mrkdwn", text: "Your events" } }],
        },
      });
    });
    app.event("app_uninstalled", async ({ event }) => note("uninstalled", event));
    app.event("tokens_revoked", async ({ event }) => note("revoked", event));
    server = (await app.start(0)) as Server;
    emu.setAppUrl(urlOf(server));
  });

  afterAll(async () => {
    await app.stop();
    await emu.close();
  });

  it("turns a slash command's ack body into an ephemeral message", async () => {
    const r = await emu.driver.slashCommand({ user: "omar", channel: "#events", text: "help" });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ text: "Try /onair schedule" });
    const cmd = got.command?.at(-1) as Record<string, string>;
    expect(cmd).toMatchObject({
      command: "/onair",
      text: "help",
      user_id: OMAR,
      user_name: "omar",
      channel_id: EVENTS,
      team_id: "T0ONAIR",
      api_app_id: "A0ONAIR",
      trigger_id: r.triggerId,
      response_url: r.responseUrl,
    });
    expect(emu.workspace.ephemeralsFor({ channel: EVENTS, user: OMAR }).at(-1)).toMatchObject({
      text: "Try /onair schedule",
      via: "command_ack",
    });
  });

  it("refuses forged requests at the app (401)", async () => {
    for (const forge of [
      "bad-signature",
      "stale-timestamp",
      "tampered-body",
      "no-signature",
    ] as const) {
      const before = got.command?.length ?? 0;
      const r = await emu.driver.slashCommand({ user: OMAR, channel: EVENTS, text: "help", forge });
      expect(r.status, forge).toBe(401);
      expect(got.command?.length ?? 0).toBe(before);
    }
  });

  it("opens the modal in the trigger's window, acts in it, and submits Slack-shaped values", async () => {
    await emu.driver.slashCommand({ user: OMAR, channel: EVENTS, text: "schedule" });
    await emu.waitForCall((c) => c.method === "views.open" && c.ok);
    const rec = emu.workspace.topView(OMAR)!;
    expect(rec.view.callback_id).toBe("schedule");

    // Picking a recurrence makes the app update the view in place.
    await emu.driver.blockAction({ user: OMAR, action_id: "recurrence", selected_option: "DAILY" });
    await emu.waitForCall((c) => c.method === "views.update" && c.ok);
    const action = got.recurrence?.at(-1) as {
      actions: Record<string, unknown>[];
      container: unknown;
    };
    expect(action.container).toEqual({ type: "view", view_id: rec.view.id });
    expect(action.actions[0]).toMatchObject({
      type: "static_select",
      action_id: "recurrence",
      block_id: "recurrence",
      selected_option: { value: "DAILY", text: { type: "plain_text", text: "DAILY" } },
    });
    expect((emu.workspace.topView(OMAR)!.view.title as { text: string }).text).toBe(
      "Schedule daily",
    );

    // A required input left empty: Slack's client would not submit.
    await expect(emu.driver.viewSubmission({ user: OMAR, values: { title: "x" } })).rejects.toThrow(
      /required/,
    );

    const values = {
      title: "bad",
      start: "2025-02-01T17:00:00Z",
      at: "17:00",
      tz: "Europe/Berlin",
      panelists: ["omar", KEI],
      notify: "#events",
      audit: "C0AUDIT",
      flags: ["enableChat"],
      count: 3,
    };
    const first = await emu.driver.viewSubmission({ user: OMAR, values });
    expect(first.outcome).toEqual({ action: "errors", errors: { title: "Give it a real name" } });
    expect(emu.workspace.topView(OMAR)?.view.id).toBe(rec.view.id);

    const second = await emu.driver.viewSubmission({
      user: OMAR,
      values: { ...values, title: "Town hall" },
    });
    expect(second.outcome).toEqual({ action: "closed" });
    expect(emu.workspace.topView(OMAR)).toBeUndefined();

    const body = got.submission?.at(-1) as {
      view: { state: { values: Record<string, { value: unknown }> } };
      response_urls: { block_id: string; channel_id: string; response_url: string }[];
      trigger_id: string;
    };
    const v = body.view.state.values;
    expect(v.title?.value).toEqual({ type: "plain_text_input", value: "Town hall" });
    expect(v.start?.value).toEqual({
      type: "datetimepicker",
      selected_date_time: Date.UTC(2025, 1, 1, 17) / 1000,
    });
    expect(v.day?.value).toEqual({ type: "datepicker", selected_date: "2025-02-01" });
    expect(v.at?.value).toEqual({ type: "timepicker", selected_time: "17:00" });
    expect(v.tz?.value).toEqual({
      type: "static_select",
      selected_option: {
        text: { type: "plain_text", text: "Europe/Berlin" },
        value: "Europe/Berlin",
      },
    });
    expect(v.panelists?.value).toEqual({ type: "multi_users_select", selected_users: [OMAR, KEI] });
    expect(v.notify?.value).toEqual({
      type: "conversations_select",
      selected_conversation: EVENTS,
    });
    expect(v.audit?.value).toEqual({ type: "channels_select", selected_channel: "C0AUDIT" });
    expect(v.flags?.value).toEqual({
      type: "checkboxes",
      selected_options: [{ text: { type: "plain_text", text: "enableChat" }, value: "enableChat" }],
    });
    expect(v.kind?.value).toMatchObject({
      type: "radio_buttons",
      selected_option: { value: "webinar" },
    });
    expect(v.count?.value).toEqual({ type: "number_input", value: "3" });
    expect(body.response_urls).toEqual([
      expect.objectContaining({ block_id: "notify", channel_id: EVENTS }),
    ]);
    expect(body.trigger_id).toBe(second.triggerId);
  });

  it("sends view_closed only for views that asked for it", async () => {
    const since = emu.calls.at(-1)?.seq ?? 0;
    await emu.driver.shortcut({ callback_id: "schedule_shortcut", user: KEI });
    await emu.waitForCall((c) => c.method === "views.open" && c.ok, { since });
    const r = await emu.driver.viewClosed({ user: KEI });
    expect(r?.status).toBe(200);
    expect((got.closed!.at(-1) as { is_cleared: boolean }).is_cleared).toBe(false);
    expect(emu.workspace.topView(KEI)).toBeUndefined();
  });

  it("clicks a button on a card and lets the app replace it through response_url", async () => {
    const since = emu.calls.at(-1)?.seq ?? 0;
    await emu.driver.slashCommand({ user: OMAR, channel: EVENTS, text: "card" });
    const posted = await emu.waitForCall((c) => c.method === "chat.postMessage" && c.ok, { since });
    const ts = (posted.response as { ts: string }).ts;

    const r = await emu.driver.blockAction({ user: OMAR, channel: EVENTS, action_id: "cancel" });
    expect(r.status).toBe(200);
    await emu.waitForCall((c) => c.method === "response_url" && c.ok, { since });
    const click = got.cancel?.at(-1) as Record<string, unknown>;
    expect(click).toMatchObject({ type: "button", action_id: "cancel", value: "evt-1" });
    const msg = emu.workspace.findMessage(emu.workspace.channels.get(EVENTS)!, ts);
    expect(msg?.text).toBe("Cancelled evt-1");
    expect(msg?.edited).toBeDefined();
  });

  it("delivers Events API callbacks (with Slack's retry headers) and the app publishes Home", async () => {
    const since = emu.calls.at(-1)?.seq ?? 0;
    const r = await emu.driver.event({ type: "app_home_opened", user: "mia" }, { retryNum: 1 });
    expect(r.status).toBe(200);
    await emu.waitForCall((c) => c.method === "views.publish" && c.ok, { since });
    const home = got.home?.at(-1) as {
      event: { user: string; tab: string; channel: string };
      retryNum: number;
    };
    expect(home.event).toMatchObject({ user: "U0MIA0MEMBER", tab: "home" });
    expect(home.event.channel).toMatch(/^D/);
    expect(home.retryNum).toBe(1);
    expect(emu.workspace.homeView("U0MIA0MEMBER")?.view.type).toBe("home");
  });

  it("uninstalls: every token revoked, both events delivered in the order asked", async () => {
    const results = await emu.driver.uninstall({ order: "tokens_revoked-first" });
    expect(results.map((x) => x.status)).toEqual([200, 200]);
    expect((got.revoked!.at(-1) as { tokens: { bot: string[] } }).tokens.bot).toEqual([
      emu.workspace.app.botUserId,
    ]);
    expect(got.uninstalled).toHaveLength(1);
    const res = await fetch(`${emu.apiUrl}auth.test`, {
      method: "POST",
      headers: { authorization: `Bearer ${emu.botToken}` },
    });
    expect(await res.json()).toEqual({ ok: false, error: "token_revoked" });
  });
});

describe("OAuth install through Bolt's InstallProvider", () => {
  it("install page → emulator authorize → redirect → oauth.v2.access → stored installation", async () => {
    const emu = await startSlackEmulator({ signingSecret: SECRET });
    const stored: Installation[] = [];
    const app = new App({
      signingSecret: SECRET,
      clientId: emu.clientId,
      clientSecret: emu.clientSecret,
      stateSecret: "driver-test-state-secret",
      scopes: ["commands", "chat:write"],
      installationStore: {
        storeInstallation: async (i) => {
          stored.push(i as Installation);
        },
        fetchInstallation: async (q: InstallationQuery<boolean>) => {
          const found = stored.find((i) => i.team?.id === q.teamId);
          if (!found) throw new Error("no installation");
          return found;
        },
        deleteInstallation: async () => {},
      },
      installerOptions: {
        directInstall: true,
        authorizationUrl: emu.authorizeUrl,
        clientOptions: { slackApiUrl: emu.apiUrl },
      },
      clientOptions: { slackApiUrl: emu.apiUrl },
      logger: quietLogger,
    });
    const server = (await app.start(0)) as Server;
    try {
      emu.setAppUrl(urlOf(server));
      const r = await emu.driver.oauthInstall({ user: "ada" });
      expect(r.install.status).toBe(302);
      expect(new URL(r.authorizeUrl).searchParams.get("scope")).toBe("commands,chat:write");
      expect(r.callback.status).toBe(200);
      expect(stored).toHaveLength(1);
      const inst = stored[0]!;
      expect(inst.team?.id).toBe("T0ONAIR");
      expect(inst.user.id).toBe("U0ADA0ADMIN");
      expect(inst.bot?.token).toMatch(/^xoxb-/);
      expect(inst.bot?.userId).toBe(emu.workspace.app.botUserId);
      expect(inst.bot?.id).toBe(emu.workspace.app.botId);
      expect(inst.bot?.scopes).toEqual(["commands", "chat:write"]);
      expect(emu.calls.map((c) => c.method)).toEqual([
        "oauth.v2.authorize",
        "oauth.v2.access",
        "auth.test",
      ]);
    } finally {
      await app.stop();
      await emu.close();
    }
  });
});
