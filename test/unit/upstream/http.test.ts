import { Writable } from "node:stream";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createLogger } from "../../../src/log.ts";
import {
  UpstreamHttpError,
  UpstreamNetworkError,
  UpstreamSchemaError,
  UpstreamTimeoutError,
} from "../../../src/upstream/errors.ts";
import {
  backoff,
  type CallMetric,
  createAgent,
  createHttp,
  decideResponseRetry,
  formatPath,
  parseRetryAfter,
  RETRY_POLICIES,
} from "../../../src/upstream/http.ts";
import { closedPort, type Handler, json, startLocalServer } from "./local-server.ts";

const agent = createAgent({ connectMs: 1_000, attemptMs: 2_000, headersMs: 2_000, bodyMs: 2_000 });
afterAll(() => agent.close());

let handler: Handler = (_r, res) => json(res, 200, {});
const server = await startLocalServer((r, res, n) => handler(r, res, n));
afterAll(() => server.close());
afterEach(() => {
  server.seen.length = 0;
});

function http(extra: { onCall?: (m: CallMetric) => void } = {}) {
  return createHttp({ dispatcher: agent, retryPolicy: RETRY_POLICIES.fast, ...extra });
}

const thing = z.object({ id: z.string(), items: z.array(z.object({ n: z.number() })) });

describe("request", () => {
  it("sends JSON, query and headers and parses the body with the schema", async () => {
    handler = (_r, res) => json(res, 200, { id: "a", items: [{ n: 1 }], extra: true });
    const res = await http().request({
      service: "events",
      method: "POST",
      url: `${server.url}/x`,
      query: { a: 1, b: undefined, c: "d e" },
      headers: { "X-Custom": "v", "X-Unset": undefined },
      body: { hello: "world" },
      schema: thing,
      expectStatus: [200],
    });
    expect(res.body).toEqual({ id: "a", items: [{ n: 1 }] });
    const seen = server.seen[0]!;
    expect(seen.url).toBe("/x?a=1&c=d+e");
    expect(seen.headers["x-custom"]).toBe("v");
    expect(seen.headers["x-unset"]).toBeUndefined();
    expect(seen.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(seen.body)).toEqual({ hello: "world" });
  });

  it("names the field path on a schema mismatch, never the value", async () => {
    handler = (_r, res) => json(res, 200, { id: "a", items: [{ n: "SECRET-VALUE" }] });
    const err = await http()
      .request({
        service: "relay",
        method: "GET",
        url: `${server.url}/x`,
        schema: thing,
        expectStatus: [200],
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamSchemaError);
    const e = err as UpstreamSchemaError;
    expect(e.issues.map((i) => i.path)).toEqual(["items[0].n"]);
    expect(e.message).toContain("items[0].n");
    expect(e.message).not.toContain("SECRET-VALUE");
    expect(JSON.stringify(e)).not.toContain("SECRET-VALUE");
    expect(server.seen).toHaveLength(1);
  });

  it("reports a non-JSON or empty 2xx body as a schema mismatch", async () => {
    handler = (_r, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<html>");
    };
    const err = await http()
      .request({
        service: "relay",
        method: "GET",
        url: `${server.url}/x`,
        schema: thing,
        expectStatus: [200],
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamSchemaError);
    expect((err as UpstreamSchemaError).issues[0]).toEqual({ path: "(body)", message: "not JSON" });
  });

  it("treats an expected status outside 2xx-with-schema as success without a body", async () => {
    handler = (_r, res) => {
      res.writeHead(204);
      res.end();
    };
    const res = await http().request({
      service: "events",
      method: "DELETE",
      url: `${server.url}/x`,
      expectStatus: [204],
    });
    expect(res).toMatchObject({ status: 204, body: undefined });
  });

  it("refuses a body larger than the cap", async () => {
    handler = (_r, res) => json(res, 200, { id: "x".repeat(5_000), items: [] });
    const err = await createHttp({
      dispatcher: agent,
      retryPolicy: RETRY_POLICIES.none,
      maxBodyBytes: 1_000,
    })
      .request({
        service: "events",
        method: "GET",
        url: `${server.url}/x`,
        schema: thing,
        expectStatus: [200],
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamNetworkError);
    expect((err as UpstreamNetworkError).networkCode).toBe("ONAIR_BODY_TOO_LARGE");
  });
});

describe("retries", () => {
  it("retries a GET on 503 and succeeds, reporting every attempt", async () => {
    handler = (_r, res, n) =>
      n <= 2 ? json(res, 503, {}) : json(res, 200, { id: "ok", items: [] });
    const calls: CallMetric[] = [];
    const res = await http({ onCall: (m) => calls.push(m) }).request({
      service: "events",
      method: "GET",
      url: `${server.url}/api/things/42`,
      route: "/api/things/:id",
      schema: thing,
      expectStatus: [200],
    });
    expect(res.body.id).toBe("ok");
    expect(calls.map((c) => [c.attempt, c.status, c.route])).toEqual([
      [1, 503, "/api/things/:id"],
      [2, 503, "/api/things/:id"],
      [3, 200, "/api/things/:id"],
    ]);
  });

  it("gives up after the policy's retries with the last error and its attempt count", async () => {
    handler = (_r, res) => json(res, 502, {});
    const err = await http()
      .request({
        service: "events",
        method: "PUT",
        url: `${server.url}/x`,
        body: {},
        expectStatus: [204],
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamHttpError);
    expect((err as UpstreamHttpError).attempts).toBe(RETRY_POLICIES.fast.retries + 1);
    expect(server.seen).toHaveLength(RETRY_POLICIES.fast.retries + 1);
  });

  it("never resends a POST that reached the server and failed with 5xx", async () => {
    handler = (_r, res) => json(res, 503, {});
    await expect(
      http().request({
        service: "events",
        method: "POST",
        url: `${server.url}/x`,
        body: {},
        expectStatus: [201],
      }),
    ).rejects.toMatchObject({ status: 503, attempts: 1 });
    expect(server.seen).toHaveLength(1);
  });

  it("resends a POST after 429 with Retry-After, which says it was not acted on", async () => {
    handler = (_r, res, n) =>
      n === 1
        ? json(res, 429, {}, { "retry-after": "0" })
        : json(res, 201, { id: "new", items: [] });
    const res = await http().request({
      service: "events",
      method: "POST",
      url: `${server.url}/x`,
      body: {},
      schema: thing,
      expectStatus: [201],
    });
    expect(res.body.id).toBe("new");
    expect(server.seen).toHaveLength(2);
  });

  it("does not wait for a Retry-After beyond the cap", async () => {
    handler = (_r, res) => json(res, 429, {}, { "retry-after": "3600" });
    await expect(
      http().request({
        service: "events",
        method: "GET",
        url: `${server.url}/x`,
        expectStatus: [200],
      }),
    ).rejects.toMatchObject({ status: 429, attempts: 1 });
  });

  it("does not retry a 4xx other than 408/429, nor what a client vetoes", async () => {
    handler = (_r, res) => json(res, 404, {});
    await expect(
      http().request({
        service: "events",
        method: "GET",
        url: `${server.url}/x`,
        expectStatus: [200],
      }),
    ).rejects.toMatchObject({ status: 404, attempts: 1 });
    handler = (_r, res) => json(res, 500, { permanent: true });
    await expect(
      http().request({
        service: "relay",
        method: "GET",
        url: `${server.url}/x`,
        expectStatus: [200],
        shouldRetryResponse: (_s, body) => !body.includes("permanent"),
      }),
    ).rejects.toMatchObject({ status: 500, attempts: 1 });
  });

  it("accepts a 404 on a retried DELETE: the first attempt did the work", async () => {
    handler = (_r, res, n) => {
      if (n === 1) json(res, 503, {});
      else json(res, 404, {});
    };
    const res = await http().request({
      service: "events",
      method: "DELETE",
      url: `${server.url}/x`,
      expectStatus: [204],
      acceptOnRetry: [404],
    });
    expect(res.status).toBe(404);
  });

  it("retries a POST that provably was not sent (connection refused), unless told never", async () => {
    const port = await closedPort();
    const url = `http://127.0.0.1:${port}/x`;
    const safe = await http()
      .request({ service: "relay", method: "POST", url, expectStatus: [200] })
      .catch((e: unknown) => e);
    expect(safe).toBeInstanceOf(UpstreamNetworkError);
    expect(safe).toMatchObject({ networkCode: "ECONNREFUSED", notSent: true, attempts: 4 });
    const never = await http()
      .request({ service: "relay", method: "POST", url, expectStatus: [200], retry: "never" })
      .catch((e: unknown) => e);
    expect(never).toMatchObject({ attempts: 1 });
  });

  it("logs the failure's code readable (the redaction of `code` fields is for OAuth codes)", async () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const port = await closedPort();
    await createHttp({
      dispatcher: agent,
      retryPolicy: RETRY_POLICIES.none,
      logger: createLogger({ level: "warn", destination }),
    })
      .request({
        service: "relay",
        method: "GET",
        url: `http://127.0.0.1:${port}/x`,
        expectStatus: [200],
      })
      .catch(() => undefined);
    const failed = lines.map((l) => JSON.parse(l)).find((l) => /without a response/.test(l.msg));
    expect(failed).toMatchObject({
      service: "relay",
      errorCode: expect.stringMatching(/^[a-z_]+$/),
    });
    expect(JSON.stringify(failed)).not.toContain("[redacted]");
  });

  it("turns a slow answer into a timeout error", async () => {
    handler = async (_r, res) => {
      await new Promise((r) => setTimeout(r, 300));
      json(res, 200, {});
    };
    const err = await createHttp({ dispatcher: agent, retryPolicy: RETRY_POLICIES.none })
      .request({
        service: "events",
        method: "GET",
        url: `${server.url}/x`,
        expectStatus: [200],
        timeoutMs: 50,
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamTimeoutError);
    expect((err as UpstreamTimeoutError).phase).toBe("headers");
  });

  it("hands an abort back to the caller unchanged", async () => {
    handler = async (_r, res) => {
      await new Promise((r) => setTimeout(r, 200));
      json(res, 200, {});
    };
    const ac = new AbortController();
    const p = http().request({
      service: "events",
      method: "GET",
      url: `${server.url}/x`,
      expectStatus: [200],
      signal: ac.signal,
    });
    ac.abort();
    const err = await p.catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(UpstreamNetworkError);
    expect((err as Error).name).toMatch(/Abort/);
  });
});

describe("retry arithmetic", () => {
  it("reads Retry-After as seconds or an HTTP date", () => {
    const now = Date.parse("2030-01-01T00:00:00Z");
    expect(parseRetryAfter("7", now)).toBe(7_000);
    expect(parseRetryAfter("Tue, 01 Jan 2030 00:00:05 GMT", now)).toBe(5_000);
    expect(parseRetryAfter("Mon, 31 Dec 2029 00:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it("backs off exponentially, capped, with jitter in the upper half", () => {
    const p = RETRY_POLICIES.default;
    expect(backoff(p, 1, () => 0)).toBe(100);
    expect(backoff(p, 1, () => 1)).toBe(200);
    expect(backoff(p, 3, () => 1)).toBe(800);
    expect(backoff(p, 20, () => 1)).toBe(p.maxMs);
  });

  it("decides per mode", () => {
    const base = {
      retryAfterMs: undefined,
      canRetry: true,
      policy: RETRY_POLICIES.default,
      vetoed: false,
    };
    expect(decideResponseRetry({ ...base, mode: "idempotent", status: 503 }).retry).toBe(true);
    expect(decideResponseRetry({ ...base, mode: "idempotent", status: 501 }).retry).toBe(false);
    expect(decideResponseRetry({ ...base, mode: "safe-post", status: 503 }).retry).toBe(false);
    expect(decideResponseRetry({ ...base, mode: "safe-post", status: 429 }).retry).toBe(false);
    expect(
      decideResponseRetry({ ...base, mode: "safe-post", status: 429, retryAfterMs: 10 }),
    ).toEqual({
      retry: true,
      waitMs: 10,
    });
    expect(decideResponseRetry({ ...base, mode: "never", status: 503 }).retry).toBe(false);
    expect(
      decideResponseRetry({ ...base, mode: "idempotent", status: 503, canRetry: false }).retry,
    ).toBe(false);
  });

  it("formats zod paths", () => {
    expect(formatPath([])).toBe("(body)");
    expect(formatPath(["a", 0, "b"])).toBe("a[0].b");
    expect(formatPath([2])).toBe("[2]");
  });
});
