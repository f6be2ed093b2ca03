import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dispatch, EmulatorBug } from "../src/dispatch.ts";
import {
  COMMON_ERRORS,
  METHODS,
  methodFacts,
  REFERENCE_SOURCE,
  SlackApiError,
  type SlackEmulator,
  startSlackEmulator,
} from "../src/index.ts";
import { authorize, exchange } from "../src/oauth.ts";
import { ALL_TEST_SCOPES } from "./helpers.ts";

// Every emulated method held to Slack's published reference (src/reference/web-api-methods.json):
// it exists there, the emulator asks for exactly its scopes and required arguments, answers only
// errors Slack documents for it, and reports arguments the method does not take.

let emu: SlackEmulator;
let noScopes: string;

async function call(
  method: string,
  args: Record<string, string>,
  token: string | undefined,
): Promise<Record<string, unknown>> {
  const res = await fetch(`${emu.apiUrl}${method}`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      ...(token !== undefined && { authorization: `Bearer ${token}` }),
    },
    body: new URLSearchParams(args).toString(),
  });
  return (await res.json()) as Record<string, unknown>;
}

beforeAll(async () => {
  emu = await startSlackEmulator({
    signingSecret: "reference-test",
    seed: { botScopes: ALL_TEST_SCOPES },
    rateLimits: false,
  });
  // A second installation's token holding no scope at all.
  const code = authorize(emu.workspace, {
    clientId: emu.clientId,
    scopes: ["commands"],
    userScopes: [],
    redirectUri: undefined,
  });
  const r = exchange(emu.workspace, {
    clientId: emu.clientId,
    clientSecret: emu.clientSecret,
    grantType: undefined,
    code,
    redirectUri: undefined,
    refreshToken: undefined,
  });
  noScopes = String(r.access_token);
});

afterAll(async () => {
  await emu.close();
});

const EMULATED = Object.keys(METHODS).sort();

describe("the reference fixture", () => {
  it("names its source", () => {
    expect(REFERENCE_SOURCE).toMatch(/slack-ruby\/slack-api-ref/);
    expect(REFERENCE_SOURCE).toMatch(/2026-08/);
  });
});

describe.each(EMULATED)("%s", (method) => {
  const facts = methodFacts(method);

  it("is a method of Slack's reference", () => {
    expect(facts, `${method} is not in the reference`).toBeDefined();
  });

  it("answers only errors the reference documents for it", () => {
    const undocumented = METHODS[method]!.errors.filter((e) => !facts!.errors.has(e));
    expect(undocumented).toEqual([]);
  });

  it("asks for exactly the reference's bot scopes", async () => {
    if (!METHODS[method]!.auth) return;
    // auth.revoke with test=true checks the token without revoking it.
    const r = await call(method, method === "auth.revoke" ? { test: "true" } : {}, noScopes);
    const wanted = facts!.scopes.bot;
    if (wanted.length === 0) {
      expect(r.error).not.toBe("missing_scope");
    } else {
      expect(r).toMatchObject({ ok: false, error: "missing_scope", provided: "commands" });
      expect(String(r.needed).split(",").sort()).toEqual([...wanted].sort());
    }
  });

  it("refuses a call missing a required argument as Slack does", async () => {
    const required = facts!.required;
    if (required.length === 0) return;
    const r = await call(method, {}, emu.botToken);
    const first = required[0]!;
    const own = `missing_${first}`;
    if (facts!.errors.has(own)) expect(r.error).toBe(own);
    else {
      expect(r.error).toBe("invalid_arguments");
      expect(r.response_metadata).toEqual({
        messages: [`[ERROR] missing required field: ${first}`],
      });
    }
  });
});

describe("arguments", () => {
  it("records arguments a method does not take, and still answers (Slack ignores them)", async () => {
    const r = await call(
      "chat.postMessage",
      { channel: "C0EVENTS", text: "hi", colour: "red", team_id: "T0ONAIR" },
      emu.botToken,
    );
    expect(r.ok).toBe(true);
    const rec = emu.calls.findLast((c) => c.method === "chat.postMessage");
    expect(rec?.unknown_arguments).toEqual(["colour", "team_id"]);
    const clean = await call("chat.postMessage", { channel: "C0EVENTS", text: "hi" }, emu.botToken);
    expect(clean.ok).toBe(true);
    expect(emu.calls.findLast((c) => c.method === "chat.postMessage")?.unknown_arguments).toBe(
      undefined,
    );
  });

  it("applies argument groups: one of the content arguments, markdown_text alone", async () => {
    expect((await call("chat.postMessage", { channel: "C0EVENTS" }, emu.botToken)).error).toBe(
      "no_text",
    );
    expect(
      (
        await call(
          "chat.postMessage",
          { channel: "C0EVENTS", text: "a", markdown_text: "**a**" },
          emu.botToken,
        )
      ).error,
    ).toBe("markdown_text_conflict");
    const view = JSON.stringify({
      type: "modal",
      title: { type: "plain_text", text: "x" },
      blocks: [],
    });
    const both = await call(
      "views.open",
      { view, trigger_id: "1.2.3", interactivity_pointer: "1.2.3" },
      emu.botToken,
    );
    expect(both.error).toBe("invalid_arguments");
    const neither = await call("views.open", { view }, emu.botToken);
    expect(neither.error).toBe("invalid_arguments");
  });

  it("answers the resolution error for an argument given empty, invalid_arguments when absent", async () => {
    expect((await call("conversations.history", { channel: "" }, emu.botToken)).error).toBe(
      "channel_not_found",
    );
    expect((await call("conversations.history", {}, emu.botToken)).error).toBe("invalid_arguments");
  });
});

describe("scopes", () => {
  it("checks the scope for the kind of conversation named, with needed and provided", async () => {
    const emu2 = await startSlackEmulator({
      signingSecret: "x",
      seed: { botScopes: ["chat:write", "groups:history"] },
      rateLimits: false,
    });
    try {
      const res = await fetch(`${emu2.apiUrl}conversations.history`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          authorization: `Bearer ${emu2.botToken}`,
        },
        body: "channel=C0EVENTS",
      });
      expect(await res.json()).toEqual({
        ok: false,
        error: "missing_scope",
        needed: "channels:history",
        provided: "chat:write,groups:history",
      });
      expect(res.headers.get("x-oauth-scopes")).toBe("chat:write,groups:history");
      expect(res.headers.get("x-accepted-oauth-scopes")).toBe(
        methodFacts("conversations.history")!.scopes.bot.join(","),
      );
    } finally {
      await emu2.close();
    }
  });

  it("has the common errors of Slack's reference, invalid_auth and invalid_arguments included", () => {
    for (const e of [
      "not_authed",
      "invalid_auth",
      "missing_scope",
      "ratelimited",
      "invalid_arguments",
    ]) {
      expect(COMMON_ERRORS.has(e), e).toBe(true);
    }
  });
});

describe("the emulator's own honesty", () => {
  it("reports a handler answering an error it does not declare as its own bug", () => {
    const strict = {
      "users.info": {
        auth: true,
        errors: ["user_not_found"],
        handler: () => {
          throw new SlackApiError("made_up_error");
        },
      },
    };
    const input = {
      method: "users.info",
      raw: { user: "U0OMAR0ORG" },
      token: emu.botToken,
      basic: undefined,
    };
    expect(() => dispatch(emu.workspace, input, strict)).toThrow(EmulatorBug);
    const declared = { "users.info": { ...strict["users.info"], errors: ["made_up_error"] } };
    expect(dispatch(emu.workspace, input, declared).body).toEqual({
      ok: false,
      error: "made_up_error",
    });
  });

  it("answers a method Slack has but the emulator does not with unknown_method and says so", async () => {
    const r = await call(
      "bookmarks.add",
      { channel_id: "C1", title: "a", type: "link" },
      emu.botToken,
    );
    expect(r).toEqual({ ok: false, error: "unknown_method" });
    expect(emu.calls.findLast((c) => c.method === "bookmarks.add")?.warnings).toEqual([
      "not_emulated",
    ]);
  });
});
