import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DriverError, type SlackEmulator, startSlackEmulator } from "../src/index.ts";
import { openView } from "../src/views.ts";
import { ALL_TEST_SCOPES } from "./helpers.ts";

// The driver keeps Slack's side of the conversation: typed text escaped as Slack sends it, the
// deadline on acknowledgements, Events API redelivery, the unsigned ssl_check. The app here is a
// bare HTTP server whose answers each test scripts; the deadline is shortened to keep it quick.

const DEADLINE = 300;
const SLOW = 700;

interface Seen {
  headers: IncomingMessage["headers"];
  body: string;
}

let emu: SlackEmulator;
let server: Server;
const seen: Seen[] = [];
let answer: (req: Seen, res: ServerResponse) => void = (_req, res) => res.writeHead(200).end();

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const s = { headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
      seen.push(s);
      answer(s, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  emu = await startSlackEmulator({
    signingSecret: "clock",
    appUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seed: { botScopes: ALL_TEST_SCOPES },
    driver: { ackDeadlineMs: DEADLINE, redeliveryScheduleMs: [0, 50, 100] },
  });
});

afterAll(async () => {
  await emu.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

beforeEach(() => {
  seen.length = 0;
  answer = (_req, res) => res.writeHead(200).end();
});

const form = (s: Seen) => Object.fromEntries(new URLSearchParams(s.body).entries());
const later = (ms: number, f: () => void) => setTimeout(f, ms);

describe("slash command text", () => {
  it("arrives as Slack sends it with should_escape: channels, people, groups, links, entities", async () => {
    await emu.driver.slashCommand({
      user: "omar",
      channel: "#events",
      text: "notify Q&A <b> #events @kei @organizers @here https://x.example/a?b=1&c=2. omar@example.com #nowhere",
    });
    expect(form(seen[0]!).text).toBe(
      "notify Q&amp;A &lt;b&gt; <#C0EVENTS|events> <@U0KEI0ORG|kei> <!subteam^S0ORGANIZERS|@organizers> <!here> <https://x.example/a?b=1&amp;c=2>. <mailto:omar@example.com|omar@example.com> #nowhere",
    );
  });

  it("does not link a private channel the person cannot see", async () => {
    await emu.driver.slashCommand({ user: "mia", channel: "#general", text: "#planning #audit" });
    expect(form(seen[0]!).text).toBe("#planning #audit");
    await emu.driver.slashCommand({ user: "ada", channel: "#general", text: "#planning" });
    expect(form(seen[1]!).text).toBe("<#C0PLANNING|planning>");
  });

  it("is sent verbatim when the test gives it escaped already", async () => {
    await emu.driver.slashCommand({
      user: "omar",
      channel: "#events",
      text: "notify <#C0EVENTS|events>",
      escaped: true,
    });
    expect(form(seen[0]!).text).toBe("notify <#C0EVENTS|events>");
  });

  it("cannot be typed where the person is not", async () => {
    await expect(
      emu.driver.slashCommand({ user: "mia", channel: "#planning", text: "x" }),
    ).rejects.toThrow(DriverError);
  });
});

describe("the acknowledgement deadline", () => {
  it("uses a command's answer in time; a late one is Slack's timeout and is not shown", async () => {
    answer = (_req, res) =>
      res.writeHead(200, { "content-type": "application/json" }).end('{"text":"on time"}');
    const fast = await emu.driver.slashCommand({ user: "omar", channel: "#events", text: "x" });
    expect(fast.late).toBe(false);
    expect(emu.workspace.ephemeralsFor({ user: "U0OMAR0ORG" }).map((e) => e.text)).toContain(
      "on time",
    );

    answer = (_req, res) =>
      later(SLOW, () =>
        res.writeHead(200, { "content-type": "application/json" }).end('{"text":"too late"}'),
      );
    const slow = await emu.driver.slashCommand({ user: "omar", channel: "#events", text: "x" });
    expect(slow.late).toBe(true);
    expect(slow.slackError).toBe("operation_timeout");
    expect(slow.body).toEqual({ text: "too late" });
    expect(emu.workspace.ephemeralsFor({ user: "U0OMAR0ORG" }).map((e) => e.text)).not.toContain(
      "too late",
    );
    expect(emu.driver.timeouts.at(-1)?.kind).toBe("/onair");
  });

  it("does not apply a late view_submission answer: the modal stays open", async () => {
    const trigger = emu.workspace.issueTriggerId("U0KEI0ORG");
    openView(emu.workspace, trigger, {
      type: "modal",
      callback_id: "form",
      title: { type: "plain_text", text: "Form" },
      submit: { type: "plain_text", text: "Save" },
      blocks: [
        {
          type: "input",
          block_id: "t",
          label: { type: "plain_text", text: "T" },
          element: { type: "plain_text_input", action_id: "v" },
        },
      ],
    });
    answer = (_req, res) => later(SLOW, () => res.writeHead(200).end());
    const r = await emu.driver.viewSubmission({ user: "kei", values: { t: "x" } });
    expect(r.late).toBe(true);
    expect(r.outcome.action).toBe("invalid");
    expect(emu.workspace.topView("U0KEI0ORG")?.view.callback_id).toBe("form");
  });
});

describe("Events API redelivery", () => {
  it("delivers again with x-slack-retry-num and http_timeout when the ack is late", async () => {
    let n = 0;
    answer = (_req, res) => {
      n += 1;
      if (n === 1) later(SLOW, () => res.writeHead(200).end());
      else res.writeHead(200).end();
    };
    const first = await emu.driver.event({ type: "app_home_opened", user: "mia" });
    await emu.driver.settled();
    expect(first.late).toBe(true);
    expect(seen).toHaveLength(2);
    const id = JSON.parse(seen[0]!.body).event_id;
    expect(JSON.parse(seen[1]!.body).event_id).toBe(id);
    expect(seen[0]!.headers["x-slack-retry-num"]).toBeUndefined();
    expect(seen[1]!.headers["x-slack-retry-num"]).toBe("1");
    expect(seen[1]!.headers["x-slack-retry-reason"]).toBe("http_timeout");
    const mine = emu.driver.deliveries.filter((d) => d.eventId === id);
    expect(mine.map((d) => [d.retryNum, d.acked])).toEqual([
      [1, true],
      [0, false],
    ]);
  });

  it("tries three more times when the app keeps failing (http_error), then stops", async () => {
    answer = (_req, res) => res.writeHead(500).end();
    await emu.driver.event({ type: "app_home_opened", user: "mia" });
    await emu.driver.settled();
    expect(seen.map((s) => s.headers["x-slack-retry-num"] ?? "0")).toEqual(["0", "1", "2", "3"]);
    expect(seen.slice(1).every((s) => s.headers["x-slack-retry-reason"] === "http_error")).toBe(
      true,
    );
  });

  it("delivers an acknowledged event once", async () => {
    await emu.driver.event({ type: "app_home_opened", user: "mia" });
    await emu.driver.settled();
    expect(seen).toHaveLength(1);
  });
});

describe("ssl_check", () => {
  it("is a form post without signature or timestamp, as Slack sends it", async () => {
    const r = await emu.driver.sslCheck();
    expect(r.status).toBe(200);
    const req = seen[0]!;
    expect(req.headers["x-slack-signature"]).toBeUndefined();
    expect(req.headers["x-slack-request-timestamp"]).toBeUndefined();
    expect(req.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    expect(form(req)).toEqual({ ssl_check: "1", token: emu.workspace.verificationToken });
  });
});
