import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { redactBody } from "../../../src/log.ts";
import {
  EventsError,
  errorFromResponse,
  parseRelayErrorBody,
  RelayError,
  redactHeaders,
  redactRequest,
  redactUrl,
  UPSTREAM_ERROR_CODES,
  UpstreamError,
  UpstreamHttpError,
  UpstreamNetworkError,
  UpstreamTimeoutError,
} from "../../../src/upstream/errors.ts";
import { RELAY_ERROR_CATALOG } from "../../../src/upstream/relay/catalog.ts";

const req = redactRequest({ method: "get", url: "https://relay.example/api/enterprises/self" });

describe("redaction", () => {
  it("replaces secret query values and userinfo, keeps the rest", () => {
    const out = redactUrl(
      "https://u:p4ss@relay.example/api/auth/accesstokens?meetingaccesstoken=MT-123&roles=ROLE_READONLY&accesstoken=AT-9&code=ZT-77&client_secret=CS",
    );
    for (const s of ["MT-123", "AT-9", "ZT-77", "CS", "p4ss"]) expect(out).not.toContain(s);
    expect(out).toContain("roles=ROLE_READONLY");
    expect(out).toContain("relay.example/api/auth/accesstokens");
  });

  it("drops credential headers whatever their case", () => {
    const out = redactHeaders({
      Authorization: "Basic c2FuZGJveDpzYW5kYm94",
      "X-Access-Token": "AT-1",
      accept: "application/json",
    });
    expect(out).toEqual({ accept: "application/json" });
  });

  it("replaces secret body keys at any depth and every webhook header value", () => {
    const out = redactBody({
      grant_type: "user_app",
      properties: { client_id: "key", client_secret: "CS-1", user_email: "a@example.com" },
      headers: { "X-OnAir-Secret": "WH-1", "X-Other": "v" },
      nested: [{ password: "pw" }],
    });
    const text = JSON.stringify(out);
    for (const s of ["CS-1", "WH-1", '"pw"']) expect(text).not.toContain(s);
    expect(text).toContain("user_app");
    expect(text).toContain("a@example.com");
    expect(Object.keys((out as { headers: object }).headers)).toEqual([
      "X-OnAir-Secret",
      "X-Other",
    ]);
  });

  it("never keeps the caller's request object", () => {
    const headers = { authorization: "Bearer T" };
    const r = redactRequest({ method: "post", url: "https://x.example/a?token=T", headers });
    expect(r.headers).not.toBe(headers);
    expect(r.method).toBe("POST");
    expect(JSON.stringify(r)).not.toContain('"T"');
    expect(r.url).not.toContain("=T");
  });
});

describe("error family", () => {
  it("has name from the class, a code from the table, and passes the cause on", () => {
    const cause = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    const e = new UpstreamNetworkError({
      service: "relay",
      request: req,
      networkCode: "ECONNREFUSED",
      notSent: true,
      cause,
    });
    expect(e).toBeInstanceOf(UpstreamError);
    expect(e.name).toBe("UpstreamNetworkError");
    expect(e.code).toBe(UPSTREAM_ERROR_CODES.network);
    expect(e.cause).toBe(cause);
    expect(e.userMessage).toMatch(/relay service/);
    expect(e.message).toContain("ECONNREFUSED");

    const t = new UpstreamTimeoutError({ service: "events", request: req, phase: "headers" });
    expect(t.name).toBe("UpstreamTimeoutError");
    expect(t.userMessage).toMatch(/^The live events service took too long/);
  });

  it("keeps the user's words apart from the log's", () => {
    const e = errorFromResponse({
      service: "relay",
      status: 503,
      bodyText: JSON.stringify({
        errorCode: 208581637,
        errorName: "ListenerOffline",
        errorMessage: "Listener ls-1 is offline",
        errorDetails: { listenerServiceId: "ls-1" },
      }),
      request: req,
    });
    expect(e.message).toContain("ListenerOffline");
    expect(e.message).toContain("GET https://relay.example/api/enterprises/self");
    expect(e.userMessage).toBe(RELAY_ERROR_CATALOG.ListenerOffline.userMessage);
    expect(e.userMessage).not.toContain("ls-1");
  });

  it("serialises without stack or secrets", () => {
    const e = errorFromResponse({
      service: "events",
      status: 401,
      bodyText: "",
      request: redactRequest({
        method: "GET",
        url: "https://events.example/api/x?accesstoken=SEKRIT",
        headers: { authorization: "Bearer SEKRIT" },
      }),
    });
    const json = JSON.stringify(e);
    expect(JSON.parse(json)).toMatchObject({ name: "EventsError", status: 401, service: "events" });
    expect(json).not.toContain("SEKRIT");
    expect(inspect(e)).not.toContain("SEKRIT");
    expect(json).not.toContain("stack");
  });
});

describe("errorFromResponse", () => {
  it("maps a catalog body to a RelayError with its name, code and details", () => {
    const e = errorFromResponse({
      service: "relay",
      status: 404,
      bodyText: JSON.stringify({
        errorCode: 1217481661,
        errorName: "NotFound",
        errorMessage: "No endpoint ep-1",
        errorDetails: { entityClass: "Endpoint", entityId: "ep-1" },
      }),
      request: req,
    });
    expect(e).toBeInstanceOf(RelayError);
    const r = e as RelayError;
    expect(r).toMatchObject({
      errorName: "NotFound",
      errorCode: 1217481661,
      status: 404,
      known: true,
    });
    expect(r.details).toEqual({ entityClass: "Endpoint", entityId: "ep-1" });
    expect(r.code).toBe(UPSTREAM_ERROR_CODES.relay);
  });

  it("still yields a usable RelayError for an unknown name or a non-JSON body", () => {
    const unknown = errorFromResponse({
      service: "relay",
      status: 418,
      bodyText: JSON.stringify({
        errorCode: 1,
        errorName: "Teapot",
        errorMessage: "short and stout",
        errorDetails: null,
      }),
      request: req,
    }) as RelayError;
    expect(unknown).toBeInstanceOf(RelayError);
    expect(unknown).toMatchObject({ errorName: "Teapot", known: false, details: null });
    expect(unknown.userMessage).toMatch(/HTTP 418/);

    const html = errorFromResponse({
      service: "relay",
      status: 502,
      bodyText: "<html>Bad gateway</html>",
      request: req,
    }) as RelayError;
    expect(html).toBeInstanceOf(RelayError);
    expect(html.errorName).toBeUndefined();
    expect(html.userMessage).toMatch(/Try again/);
    expect(parseRelayErrorBody("[1,2]")).toBeUndefined();
  });

  it("maps events failures by status, with plain words per status", () => {
    const words = new Map<number, string>();
    for (const status of [400, 401, 403, 404, 409, 429, 500, 502, 503, 504]) {
      const e = errorFromResponse({ service: "events", status, bodyText: "", request: req });
      expect(e).toBeInstanceOf(EventsError);
      expect(e.status).toBe(status);
      expect(e.userMessage).toMatch(/^The live events service .+\. .+\.$/);
      words.set(status, e.userMessage);
    }
    expect(words.get(500)).toMatch(/contact the service operator/);
    expect(new Set(words.values()).size).toBeGreaterThanOrEqual(8);
  });

  it("uses an operation's own words when given", () => {
    const e = errorFromResponse({
      service: "events",
      status: 404,
      bodyText: "",
      request: req,
      userMessages: { 404: "No such user." },
    });
    expect(e.userMessage).toBe("No such user.");
  });

  it("maps an unexpected success status to a plain UpstreamHttpError", () => {
    const e = errorFromResponse({ service: "events", status: 200, bodyText: "{}", request: req });
    expect(e).toBeInstanceOf(UpstreamHttpError);
    expect(e).not.toBeInstanceOf(EventsError);
    expect(e.code).toBe(UPSTREAM_ERROR_CODES.httpStatus);
  });
});
