import { WebClient } from "@slack/web-api";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  flexpanesFor,
  openWorkObject,
  type SlackEmulator,
  setWorkObjects,
  startSlackEmulator,
  workObjectsOf,
} from "../src/index.ts";
import { ALL_TEST_SCOPES, quietLogger, slackError } from "./helpers.ts";

// Work Objects: chat.unfurl's metadata, entity_details_requested and entity.presentDetails, held
// to Slack's reference (required fields, the app's Work Objects setting, the trigger).

let emu: SlackEmulator;
let bot: WebClient;
const EVENTS = "C0EVENTS";
const MIA = "U0MIA0MEMBER";
const URL_A = "https://live.example.com/123";

beforeAll(async () => {
  emu = await startSlackEmulator({
    signingSecret: "s",
    seed: { botScopes: ALL_TEST_SCOPES },
    rateLimits: false,
  });
  emu.setAppUrl("http://127.0.0.1:9");
  bot = new WebClient(emu.botToken, {
    slackApiUrl: emu.apiUrl,
    retryConfig: { retries: 0 },
    logger: quietLogger,
  });
});
afterAll(async () => {
  await emu.close();
});
beforeEach(() => {
  setWorkObjects(emu.workspace, { enabled: true, refusal: "warning" });
});

const entity = (over: Record<string, unknown> = {}) => ({
  app_unfurl_url: URL_A,
  url: URL_A,
  external_ref: { id: "E1" },
  entity_type: "slack#/entities/item",
  entity_payload: {
    attributes: { title: { text: "Town hall" } },
    custom_fields: [{ key: "state", label: "State", type: "string", value: "Live now" }],
    display_order: ["state"],
    actions: { primary_actions: [{ text: "Attendance", action_id: "att", value: "E1" }] },
  },
  ...over,
});

async function share(): Promise<string> {
  const shared = await emu.driver.postMessage({
    user: MIA,
    channel: EVENTS,
    text: `join <${URL_A}>`,
    unfurlDomains: ["live.example.com"],
  });
  emu.driver.cancelRedeliveries();
  return shared.ts;
}

describe("chat.unfurl with metadata (Work Objects)", () => {
  it("keeps a valid entity for its URL; refuses a URL not shared, and metadata without entities", async () => {
    const ts = await share();
    const ok = await bot.chat.unfurl({
      channel: EVENTS,
      ts,
      metadata: { entities: [entity()] },
    } as never);
    expect(ok.ok).toBe(true);
    expect((ok as { warning?: string }).warning).toBeUndefined();
    expect(workObjectsOf(emu.workspace, EVENTS, ts)[URL_A]).toMatchObject({
      external_ref: { id: "E1" },
    });
    expect(
      (
        await slackError(
          bot.chat.unfurl({
            channel: EVENTS,
            ts,
            metadata: { entities: [entity({ app_unfurl_url: "https://live.example.com/9" })] },
          } as never),
        )
      ).error,
    ).toBe("cannot_unfurl_url");
    expect(
      (
        await slackError(
          bot.chat.unfurl({ channel: EVENTS, ts, metadata: { entities: [] } } as never),
        )
      ).error,
    ).toBe("invalid_metadata_format");
    // Neither unfurls nor metadata: the method's argument group.
    expect((await slackError(bot.chat.unfurl({ channel: EVENTS, ts } as never))).error).toBe(
      "invalid_arguments",
    );
  });

  it("drops an entity missing a required field with ok and a warning naming it", async () => {
    const ts = await share();
    const bad = entity({ external_ref: {} });
    const res = (await bot.chat.unfurl({
      channel: EVENTS,
      ts,
      metadata: { entities: [bad] },
    } as never)) as {
      ok: boolean;
      warning?: string;
      response_metadata?: { messages?: string[] };
    };
    expect(res.ok).toBe(true);
    expect(res.warning).toBe("invalid_metadata_format");
    expect(res.response_metadata?.messages?.join("\n")).toContain(
      "/metadata/entities/0/external_ref/id",
    );
    expect(workObjectsOf(emu.workspace, EVENTS, ts)).toEqual({});
  });

  it("with Work Objects off: dropped with a warning, or refused, as the setting says", async () => {
    const ts = await share();
    setWorkObjects(emu.workspace, { enabled: false, refusal: "warning" });
    const res = (await bot.chat.unfurl({
      channel: EVENTS,
      ts,
      metadata: { entities: [entity()] },
    } as never)) as {
      warning?: string;
    };
    expect(res.warning).toBe("invalid_metadata_format");
    expect(workObjectsOf(emu.workspace, EVENTS, ts)).toEqual({});
    setWorkObjects(emu.workspace, { refusal: "error" });
    expect(
      (
        await slackError(
          bot.chat.unfurl({ channel: EVENTS, ts, metadata: { entities: [entity()] } } as never),
        )
      ).error,
    ).toBe("invalid_metadata_format");
  });
});

describe("entity_details_requested and entity.presentDetails", () => {
  it("sends the event with a trigger the flexpane answers once, for the same external_ref", async () => {
    const ts = await share();
    await bot.chat.unfurl({ channel: EVENTS, ts, metadata: { entities: [entity()] } } as never);
    const opened = await openWorkObject(emu.driver, emu.workspace, {
      user: MIA,
      channel: EVENTS,
      message_ts: ts,
      url: URL_A,
    });
    emu.driver.cancelRedeliveries();
    const ev = (opened.payload as { event: Record<string, unknown> }).event;
    expect(ev).toMatchObject({
      type: "entity_details_requested",
      user: MIA,
      external_ref: { id: "E1" },
      app_unfurl_url: URL_A,
      channel: EVENTS,
      message_ts: ts,
    });
    const { app_unfurl_url: _, ...flex } = entity();
    expect(
      (
        await slackError(
          bot.entity.presentDetails({
            trigger_id: opened.triggerId,
            metadata: { ...flex, external_ref: { id: "OTHER" } },
          } as never),
        )
      ).error,
    ).toBe("entity_metadata_does_not_match_trigger");
    expect(
      (await slackError(bot.entity.presentDetails({ trigger_id: opened.triggerId } as never)))
        .error,
    ).toBe("invalid_metadata");
    expect(
      (
        await slackError(
          bot.entity.presentDetails({
            trigger_id: opened.triggerId,
            error: { status: "nope" },
          } as never),
        )
      ).error,
    ).toBe("invalid_metadata");
    expect(
      (
        await slackError(
          bot.entity.presentDetails({
            trigger_id: opened.triggerId,
            metadata: flex,
            user_auth_required: true,
          } as never),
        )
      ).error,
    ).toBe("user_auth_url_missing");
    await bot.entity.presentDetails({ trigger_id: opened.triggerId, metadata: flex } as never);
    expect(flexpanesFor(emu.workspace, MIA).at(-1)?.metadata).toMatchObject({
      external_ref: { id: "E1" },
    });
    // Once.
    expect(
      (
        await slackError(
          bot.entity.presentDetails({ trigger_id: opened.triggerId, metadata: flex } as never),
        )
      ).error,
    ).toBe("invalid_trigger_id");
    expect(
      (
        await slackError(
          bot.entity.presentDetails({ trigger_id: "1.2.3", metadata: flex } as never),
        )
      ).error,
    ).toBe("invalid_trigger_id");
  });

  it("a trigger expires after 3 seconds; with Work Objects off the method is feature_not_enabled", async () => {
    const ts = await share();
    await bot.chat.unfurl({ channel: EVENTS, ts, metadata: { entities: [entity()] } } as never);
    const opened = await openWorkObject(emu.driver, emu.workspace, {
      user: MIA,
      channel: EVENTS,
      message_ts: ts,
      url: URL_A,
    });
    emu.driver.cancelRedeliveries();
    const { app_unfurl_url: _, ...flex } = entity();
    setWorkObjects(emu.workspace, { enabled: false });
    expect(
      (
        await slackError(
          bot.entity.presentDetails({ trigger_id: opened.triggerId, metadata: flex } as never),
        )
      ).error,
    ).toBe("feature_not_enabled");
    setWorkObjects(emu.workspace, { enabled: true });
    const realNow = emu.workspace.now;
    emu.workspace.now = () => realNow() + 3_001;
    try {
      expect(
        (
          await slackError(
            bot.entity.presentDetails({ trigger_id: opened.triggerId, metadata: flex } as never),
          )
        ).error,
      ).toBe("invalid_trigger_id");
    } finally {
      emu.workspace.now = realNow;
    }
  });

  it("opens no flexpane for a link unfurled the classic way", async () => {
    const ts = await share();
    await bot.chat.unfurl({ channel: EVENTS, ts, unfurls: { [URL_A]: { blocks: [] } } });
    await expect(
      openWorkObject(emu.driver, emu.workspace, {
        user: MIA,
        channel: EVENTS,
        message_ts: ts,
        url: URL_A,
      }),
    ).rejects.toThrow(/no Work Object/);
  });
});
