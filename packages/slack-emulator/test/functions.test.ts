import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { verifySlackRequest } from "@slack/bolt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DriverError } from "../src/driver/index.ts";
import { type FunctionDefinition, type SlackEmulator, startSlackEmulator } from "../src/index.ts";
import { authorize, exchange } from "../src/oauth.ts";
import { ALL_TEST_SCOPES } from "./helpers.ts";

// Custom steps: function_executed as Slack sends it, and functions.completeSuccess/completeError
// held to the reference (errors, the execution's own token, outputs against the declaration).

const SECRET = "functions-test-signing-secret";
const OMAR = "U0OMAR0ORG";

const STEP: FunctionDefinition = {
  title: "Greet",
  description: "Greets someone",
  input_parameters: {
    who: { type: "slack#/types/user_id", title: "Who", is_required: true },
    at: { type: "slack#/types/timestamp", is_required: true },
    where: { type: "slack#/types/channel_id" },
    note: { type: "string" },
  },
  output_parameters: {
    greeting: { type: "string", is_required: true },
    count: { type: "integer" },
  },
};

let emu: SlackEmulator;
let capture: Server;
const seen: { headers: IncomingMessage["headers"]; body: string }[] = [];

async function readRaw(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

async function call(method: string, args: Record<string, unknown>, token: string) {
  const res = await fetch(`${emu.apiUrl}${method}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify(args),
  });
  return (await res.json()) as { ok: boolean; error?: string };
}

beforeAll(async () => {
  capture = createServer((req, res) => {
    readRaw(req).then((body) => {
      seen.push({ headers: req.headers, body });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => capture.listen(0, "127.0.0.1", r));
  emu = await startSlackEmulator({
    signingSecret: SECRET,
    appUrl: `http://127.0.0.1:${(capture.address() as AddressInfo).port}`,
    seed: { botScopes: ALL_TEST_SCOPES, functions: { greet: STEP } },
    rateLimits: false,
  });
});

afterAll(async () => {
  await emu.close();
  await new Promise((r) => capture.close(r));
});

async function run(inputs: Record<string, unknown> = { who: "omar", at: 1_900_000_000 }) {
  const r = await emu.driver.functionExecuted({ callback_id: "greet", inputs });
  return r.execution;
}

describe("function_executed", () => {
  it("is a signed event callback with the inputs, the function and a token of its own", async () => {
    const before = seen.length;
    const ex = await run({ who: "omar", at: 1_900_000_000, where: "#events", note: "hi" });
    const req = seen[before]!;
    verifySlackRequest({
      signingSecret: SECRET,
      body: req.body,
      headers: {
        "x-slack-signature": String(req.headers["x-slack-signature"]),
        "x-slack-request-timestamp": Number(req.headers["x-slack-request-timestamp"]),
      },
    });
    const body = JSON.parse(req.body);
    expect(body.type).toBe("event_callback");
    const ev = body.event;
    expect(ev.type).toBe("function_executed");
    expect(ev.function_execution_id).toBe(ex.id);
    expect(ev.workflow_execution_id).toBe(ex.workflowExecutionId);
    expect(ev.inputs).toEqual({ who: OMAR, at: 1_900_000_000, where: "C0EVENTS", note: "hi" });
    expect(ev.bot_access_token).toBe(ex.token);
    expect(ev.bot_access_token).not.toBe(emu.botToken);
    expect(ev.function.callback_id).toBe("greet");
    expect(ev.function.input_parameters).toContainEqual({
      type: "slack#/types/user_id",
      name: "who",
      title: "Who",
      is_required: true,
    });
    expect(typeof ev.event_ts).toBe("string");
    expect(ex.state).toBe("running");
  });

  it("is refused for a function the app does not declare, or inputs Workflow Builder would not send", async () => {
    await expect(
      emu.driver.functionExecuted({ callback_id: "nope", inputs: {} }),
    ).rejects.toBeInstanceOf(DriverError);
    await expect(
      emu.driver.functionExecuted({ callback_id: "greet", inputs: { at: 1 } }),
    ).rejects.toThrow(/who is required/);
    await expect(
      emu.driver.functionExecuted({ callback_id: "greet", inputs: { who: OMAR, at: "soon" } }),
    ).rejects.toThrow(/at must be a Unix timestamp/);
  });

  it("acts as the bot with the installation's scopes", async () => {
    const ex = await run();
    const r = await call("users.info", { user: OMAR }, ex.token);
    expect(r.ok).toBe(true);
  });
});

describe("functions.completeSuccess / completeError", () => {
  it("completes once with outputs that fit the declaration", async () => {
    const ex = await run();
    const out = { greeting: "hello", count: 2 };
    expect(
      await call(
        "functions.completeSuccess",
        { function_execution_id: ex.id, outputs: out },
        ex.token,
      ),
    ).toEqual({ ok: true });
    expect(ex.state).toBe("completed");
    expect(ex.outputs).toEqual(out);
    expect(
      await call(
        "functions.completeSuccess",
        { function_execution_id: ex.id, outputs: out },
        ex.token,
      ),
    ).toEqual({ ok: false, error: "execution_not_in_running_state" });
    expect(
      await call("functions.completeError", { function_execution_id: ex.id, error: "x" }, ex.token),
    ).toEqual({ ok: false, error: "execution_not_in_running_state" });
    expect(ex.completions.map((c) => c.ok)).toEqual([true, false, false]);
  });

  it("refuses outputs missing a required one, naming one not declared, or of another type", async () => {
    const ex = await run();
    for (const outputs of [{ count: 1 }, { greeting: "hi", extra: 1 }, { greeting: 5 }]) {
      const r = await call(
        "functions.completeSuccess",
        { function_execution_id: ex.id, outputs },
        ex.token,
      );
      expect(r.error).toBe("parameter_validation_failed");
    }
    expect(ex.state).toBe("running");
  });

  it("takes the execution's token or the app's bot token, and no other execution's", async () => {
    const a = await run();
    const b = await run();
    expect(
      (await call("functions.completeError", { function_execution_id: a.id, error: "no" }, b.token))
        .error,
    ).toBe("access_denied");
    expect(
      await call(
        "functions.completeError",
        { function_execution_id: a.id, error: "no" },
        emu.botToken,
      ),
    ).toEqual({ ok: true });
    expect(a.state).toBe("failed");
    expect(a.error).toBe("no");
    expect(a.completions.map((c) => [c.ok, c.token])).toEqual([
      [false, "function"],
      [true, "bot"],
    ]);
    expect(
      (
        await call(
          "functions.completeError",
          { function_execution_id: "Fx0NONE", error: "no" },
          b.token,
        )
      ).error,
    ).toBe("function_execution_not_found");
  });

  it("refuses a user token and a missing argument", async () => {
    const ex = await run();
    const code = authorize(emu.workspace, {
      clientId: emu.clientId,
      scopes: ["commands"],
      userScopes: ["users:read"],
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
    const userToken = String((r.authed_user as { access_token: string }).access_token);
    expect(
      (
        await call(
          "functions.completeError",
          { function_execution_id: ex.id, error: "x" },
          userToken,
        )
      ).error,
    ).toBe("not_allowed_token_type");
    expect(
      (await call("functions.completeError", { function_execution_id: ex.id }, ex.token)).error,
    ).toBe("invalid_arguments");
    expect(ex.state).toBe("running");
  });

  it("never shows the function token in the call log", async () => {
    const ex = await run();
    await call("functions.completeError", { function_execution_id: ex.id, error: "x" }, ex.token);
    expect(JSON.stringify(emu.calls)).not.toContain(ex.token);
  });
});
