import { randomBytes } from "node:crypto";
import { request } from "node:http";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashWebhookSecret } from "../../src/store/index.ts";
import { CHANNELS, type Harness, startHarness, TEAM } from "../helpers/app-harness.ts";
import { eventually } from "../helpers/live-fixtures.ts";

/**
 * The webhook route against a hostile corpus, over real HTTP: each request gets the right status,
 * none reaches Slack, the process keeps serving.
 */

let h: Harness;
const SUB = randomBytes(18).toString("base64url");
const SECRET = randomBytes(32).toString("base64url");
const EVENT = "evt-hostile-1";

beforeAll(async () => {
  h = await startHarness();
  await h.app.store.subscriptions.put(SUB, {
    team: TEAM,
    eventId: EVENT,
    channels: [CHANNELS.general],
    secretSha256: hashWebhookSecret(SECRET),
    types: ["EVENT_STATE", "ATTENDEE_INFO"],
    noise: "off",
    createdAt: Date.now(),
  });
});
afterAll(async () => {
  await h?.close();
});

interface Sent {
  status: number;
  body: string;
  /** Bytes of the body written when the answer came. */
  writtenAtAnswer: number;
}

/** A raw request: any method, headers and body, optionally streamed in chunks without a length. */
function send(opts: {
  path?: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  chunked?: { chunk: Buffer; times: number };
}): Promise<Sent> {
  const url = new URL(opts.path ?? `/webhooks/events/${SUB}`, h.app.origin);
  return new Promise((resolve, reject) => {
    let written = 0;
    const req = request(
      url,
      { method: opts.method ?? "POST", headers: opts.headers ?? {}, agent: false },
      (res) => {
        const at = written;
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => {
          body += d;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body, writtenAtAnswer: at }));
        res.on("error", reject);
      },
    );
    // The server may close while we are still uploading: that is the point of the test.
    req.on("error", () => undefined);
    if (opts.chunked) {
      const { chunk, times } = opts.chunked;
      let i = 0;
      const pump = () => {
        while (i < times) {
          i++;
          written += chunk.length;
          if (!req.write(chunk)) {
            req.once("drain", pump);
            return;
          }
        }
        req.end();
      };
      pump();
      req.on("close", () => {
        i = times;
      });
      return;
    }
    if (opts.body !== undefined) {
      written = Buffer.byteLength(opts.body);
      req.end(opts.body);
    } else req.end();
  });
}

const JSON_HEADERS = { "content-type": "application/json", "x-onair-secret": SECRET };

function stateMessage(extra: Record<string, unknown> = {}) {
  return {
    eventId: EVENT,
    instanceId: "i1",
    type: "EVENT_STATE",
    info: { state: "PREP_EVENT" },
    ...extra,
  };
}

describe("POST /webhooks/events/:id against a hostile corpus", () => {
  it("gives the right status to each bad request, and none reaches Slack", async () => {
    const since = h.emulator.calls.length;
    const valid = JSON.stringify(stateMessage());
    const cases: Array<[string, Parameters<typeof send>[0], number]> = [
      [
        "unknown id",
        {
          path: `/webhooks/events/${randomBytes(18).toString("base64url")}`,
          headers: JSON_HEADERS,
          body: valid,
        },
        404,
      ],
      [
        "id with odd characters",
        { path: "/webhooks/events/..%2F..%2Fetc", headers: JSON_HEADERS, body: valid },
        404,
      ],
      ["short id", { path: "/webhooks/events/abc", headers: JSON_HEADERS, body: valid }, 404],
      ["missing secret", { headers: { "content-type": "application/json" }, body: valid }, 401],
      [
        "wrong secret, same length",
        {
          headers: { ...JSON_HEADERS, "x-onair-secret": randomBytes(32).toString("base64url") },
          body: valid,
        },
        401,
      ],
      [
        "shorter secret",
        { headers: { ...JSON_HEADERS, "x-onair-secret": SECRET.slice(0, 10) }, body: valid },
        401,
      ],
      [
        "longer secret",
        { headers: { ...JSON_HEADERS, "x-onair-secret": SECRET + SECRET }, body: valid },
        401,
      ],
      ["empty secret", { headers: { ...JSON_HEADERS, "x-onair-secret": "" }, body: valid }, 401],
      ["GET", { method: "GET", headers: JSON_HEADERS }, 405],
      ["DELETE", { method: "DELETE", headers: JSON_HEADERS }, 405],
      ["PATCH", { method: "PATCH", headers: JSON_HEADERS, body: valid }, 405],
      [
        "text/plain",
        { headers: { ...JSON_HEADERS, "content-type": "text/plain" }, body: valid },
        415,
      ],
      [
        "form",
        {
          headers: { ...JSON_HEADERS, "content-type": "application/x-www-form-urlencoded" },
          body: "a=b",
        },
        415,
      ],
      ["no content type", { headers: { "x-onair-secret": SECRET }, body: valid }, 415],
      ["bad JSON", { headers: JSON_HEADERS, body: "{not json" }, 400],
      ["empty body", { headers: JSON_HEADERS, body: "" }, 400],
      ["JSON null", { headers: JSON_HEADERS, body: "null" }, 400],
      ["JSON array", { headers: JSON_HEADERS, body: "[]" }, 400],
      [
        "string eventId number",
        { headers: JSON_HEADERS, body: JSON.stringify(stateMessage({ eventId: 42 })) },
        400,
      ],
      [
        "unknown type",
        { headers: JSON_HEADERS, body: JSON.stringify(stateMessage({ type: "BOGUS" })) },
        400,
      ],
      [
        "info missing",
        {
          headers: JSON_HEADERS,
          body: JSON.stringify({ eventId: EVENT, instanceId: "i1", type: "EVENT_STATE" }),
        },
        400,
      ],
      [
        "instanceId missing",
        {
          headers: JSON_HEADERS,
          body: JSON.stringify({
            eventId: EVENT,
            type: "EVENT_STATE",
            info: { state: "IN_EVENT" },
          }),
        },
        400,
      ],
      [
        "joinTime as a string",
        {
          headers: JSON_HEADERS,
          body: JSON.stringify({
            eventId: EVENT,
            instanceId: "i1",
            type: "ATTENDEE_INFO",
            info: {
              endpointGuid: "g",
              endpointType: "browser",
              infoType: "JOIN",
              joinTime: "now",
              name: "x",
            },
          }),
        },
        400,
      ],
      [
        "another event's id",
        { headers: JSON_HEADERS, body: JSON.stringify(stateMessage({ eventId: "evt-other" })) },
        400,
      ],
      [
        "__proto__ standing in for the fields",
        {
          headers: JSON_HEADERS,
          body: '{"__proto__":{"eventId":"evt-hostile-1","instanceId":"i1","type":"EVENT_STATE","info":{"state":"IN_EVENT"}}}',
        },
        400,
      ],
      [
        "10 MB declared",
        {
          headers: { ...JSON_HEADERS, "content-length": String(10 * 1024 * 1024) },
          chunked: { chunk: Buffer.alloc(1024 * 1024, 0x20), times: 10 },
        },
        413,
      ],
    ];
    for (const [name, req, status] of cases) {
      const res = await send(req);
      expect(res.status, `${name}: ${res.body}`).toBe(status);
    }
    // No body stored: nothing reached the outbox.
    expect(await h.app.store.outbox.list()).toEqual([]);
    expect(h.emulator.calls.slice(since).filter((c) => c.method.startsWith("chat."))).toEqual([]);
  });

  it("answers 400 with the reason", async () => {
    const res = await send({
      headers: JSON_HEADERS,
      body: JSON.stringify(stateMessage({ instanceId: 7 })),
    });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body).error).toMatch(/instanceId/);
  });

  it("refuses a 10 MB body streamed without a length after 64 KB, without reading it all", async () => {
    const res = await send({
      headers: {
        "content-type": "application/json",
        "x-onair-secret": SECRET,
        "transfer-encoding": "chunked",
      },
      chunked: { chunk: Buffer.alloc(64 * 1024, 0x20), times: 160 },
    });
    expect(res.status).toBe(413);
    expect(res.writtenAtAnswer).toBeLessThan(10 * 1024 * 1024);
    const declared = await send({
      headers: { ...JSON_HEADERS, "content-length": String(10 * 1024 * 1024) },
      chunked: { chunk: Buffer.alloc(1024 * 1024, 0x20), times: 10 },
    });
    expect(declared.status).toBe(413);
    expect(declared.writtenAtAnswer).toBeLessThan(10 * 1024 * 1024);
  });

  it("keeps __proto__ and constructor keys harmless, accepts the message once it is valid", async () => {
    const body =
      '{"eventId":"evt-hostile-1","instanceId":"i1","type":"EVENT_STATE","info":{"state":"PREP_EVENT","__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":2}}},"__proto__":{"polluted":3},"constructor":{"prototype":{"polluted":4}}}';
    const res = await send({ headers: JSON_HEADERS, body });
    expect(res.status).toBe(204);
    const put = await send({
      method: "PUT",
      headers: JSON_HEADERS,
      body: JSON.stringify(stateMessage()),
    });
    expect(put.status).toBe(204);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty("polluted");
  });

  it("answers by the path the URL parser sees, whatever form the request target takes", async () => {
    // Sent byte for byte (no client-side normalisation): the route's fast path takes only
    // targets the parser would leave alone; the others must still get today's answers.
    const raw = (path: string, method = "POST") =>
      new Promise<number>((resolve, reject) => {
        const u = new URL(h.app.origin);
        const req = request(
          { host: u.hostname, port: u.port, path, method, headers: JSON_HEADERS, agent: false },
          (res) => {
            res.resume();
            res.on("end", () => resolve(res.statusCode ?? 0));
          },
        );
        req.on("error", reject);
        req.end(JSON.stringify(stateMessage()));
      });
    const cases: Array<[string, number]> = [
      [`/webhooks/events/${SUB}`, 204],
      [`/webhooks/events/${SUB}?from=upstream&x=%2F`, 204],
      [`/webhooks/events/elsewhere/../${SUB}`, 204],
      [`/webhooks/events/./${SUB}`, 204],
      [`/webhooks/events/${SUB}/`, 404],
      [`/webhooks/events/${SUB}\\`, 404],
      [`/webhooks/events/%${SUB.charCodeAt(0).toString(16)}${SUB.slice(1)}`, 404],
      [`/webhooks/events/${SUB}/extra`, 404],
      [`/webhooks/events/`, 404],
      [`/webhooks/events/${"a".repeat(65)}`, 404],
    ];
    for (const [path, status] of cases) expect(await raw(path), path).toBe(status);
    expect(await raw(`/webhooks/events/${SUB}`, "GET")).toBe(405);
    const metrics = await (await fetch(new URL("/metrics", h.app.origin))).text();
    expect(metrics).toMatch(
      /onair_http_requests_total\{route="\/webhooks\/events\/:id",status="204"\} \d+/,
    );
    expect(metrics).not.toContain(SUB);
  });

  it("counts a sender that hangs up mid-body as 499 (client closed), logs no error, and serves on", async () => {
    const metric = async () => {
      const text = await (await fetch(new URL("/metrics", h.app.origin))).text();
      const m = text.match(
        /onair_http_requests_total\{route="\/webhooks\/events\/:id",status="(\d+)"\} (\d+)/g,
      );
      return Object.fromEntries(
        (m ?? []).map((line) => {
          const [, status, n] = /status="(\d+)"\} (\d+)/.exec(line) ?? [];
          return [status, Number(n)];
        }),
      );
    };
    const failedLines = () => h.logs.filter((l) => l.includes('"request failed"')).length;
    const before = await metric();
    const failedBefore = failedLines();
    const { port } = new URL(h.app.origin);
    for (let i = 0; i < 3; i++) {
      const socket = connect(Number(port), "127.0.0.1");
      await new Promise((r) => socket.once("connect", r));
      // Expect: 100-continue: the "100 Continue" says the route has the request before the
      // sender hangs up with 100 bytes declared and 11 sent.
      socket.write(
        `POST /webhooks/events/${SUB} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nx-onair-secret: ${SECRET}\r\ncontent-length: 100\r\nexpect: 100-continue\r\n\r\n{"eventId":`,
      );
      await new Promise((r) => socket.once("data", r));
      socket.destroy();
    }
    await eventually(
      async () => ((await metric())["499"] ?? 0) - (before["499"] ?? 0) === 3 || undefined,
      "three abandoned requests counted",
    );
    const after = await metric();
    expect(after["500"] ?? 0).toBe(before["500"] ?? 0);
    expect(failedLines()).toBe(failedBefore);
    const ok = await send({ headers: JSON_HEADERS, body: JSON.stringify(stateMessage()) });
    expect(ok.status).toBe(204);
  });

  it("stays up and serves afterwards", async () => {
    const health = await fetch(new URL("/healthz", h.app.origin));
    expect(health.status).toBe(200);
    expect(h.logs.join("\n")).not.toContain(SECRET);
  });
});
