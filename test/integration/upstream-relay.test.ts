import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  RelayError,
  UpstreamSchemaError,
  UpstreamTimeoutError,
} from "../../src/upstream/errors.ts";
import { createEventsClient } from "../../src/upstream/events/client.ts";
import { createHttp, RETRY_POLICIES } from "../../src/upstream/http.ts";
import {
  RELAY_ERROR_CATALOG,
  RELAY_ERROR_NAMES,
  RELAY_TRANSIENT_ERRORS,
} from "../../src/upstream/relay/catalog.ts";
import { createRelayClient, type RelayClient } from "../../src/upstream/relay/client.ts";
import { json, startLocalServer } from "../unit/upstream/local-server.ts";
import { startUpstreamHarness, type UpstreamHarness } from "./upstream-harness.ts";

const BASIC = { username: "sandbox", password: "sandbox" };
const WRONG = { username: "sandbox", password: "wrong-pw-4f9c2e" };
const DAY = 24 * 60 * 60 * 1000;

let h: UpstreamHarness;
let relay: RelayClient;
/** Every credential these tests handle, for the final leak scan. */
const secrets = new Set<string>(["sandbox:sandbox", WRONG.password, "sandbox-secret"]);

beforeAll(async () => {
  h = await startUpstreamHarness();
  relay = createRelayClient({ baseUrl: h.sandbox.relayBaseUrl, http: h.http });
});
afterAll(() => h.close());
afterEach(async () => {
  await h.clearFaults();
  await h.clearLog();
});

async function mint(...args: Parameters<RelayClient["createAccessToken"]>) {
  const t = await relay.createAccessToken(...args);
  secrets.add(t.accessToken);
  return t;
}

describe("relay: access tokens", () => {
  it("creates a token with Basic credentials and the spec's defaults", async () => {
    const before = Date.now();
    const t = await mint({ basic: BASIC });
    expect(t.roles).toEqual(["ROLE_READWRITE", "ROLE_READONLY"]);
    expect(t.clientName).toBeNull();
    expect(t.enterpriseName).toBe("sandbox");
    expect(t.creationDate).toBeGreaterThanOrEqual(before);
    expect(t.expirationDate).toBe(t.creationDate + 14 * DAY);
  });

  it("sends roles, duration and client name as query parameters", async () => {
    const t = await mint(
      { basic: BASIC },
      { roles: ["ROLE_READONLY"], durationMs: 60_000, clientName: "kiosk 4" },
    );
    expect(t).toMatchObject({ roles: ["ROLE_READONLY"], clientName: "kiosk 4" });
    expect(t.expirationDate).toBe(t.creationDate + 60_000);
    const [entry] = await h.log();
    expect(entry).toMatchObject({
      service: "relay",
      method: "POST",
      path: "/api/auth/accesstokens",
      query: { roles: "ROLE_READONLY", duration: "60000", clientname: "kiosk 4" },
      status: 200,
    });
  });

  it("makes a never-expiring token with duration -1", async () => {
    const t = await mint({ basic: BASIC }, { durationMs: -1 });
    expect(t.expirationDate).toBeNull();
  });

  it("creates a token from an events access token, and a one-day pairing token with a code", async () => {
    const events = createEventsClient({ baseUrl: h.sandbox.eventsBaseUrl, http: h.http });
    const grant = await events.grantUserApp({
      clientId: "sandbox-key",
      clientSecret: "sandbox-secret",
      email: "relay-suite@example.com",
    });
    secrets.add(grant.accessToken);
    const t = await mint({ meetingAccessToken: grant.accessToken });
    expect(t.expirationDate).toBe(t.creationDate + 14 * DAY);
    const pairing = await mint(
      { meetingAccessToken: grant.accessToken },
      { code: "ZT-PAIR-8812", durationMs: 5 * DAY },
    );
    expect(pairing.expirationDate).toBe(pairing.creationDate + DAY);
    secrets.add("ZT-PAIR-8812");
    const relayCalls = (await h.log()).filter((e) => e.service === "relay");
    expect(relayCalls).toHaveLength(2);
    for (const e of relayCalls) expect(e.query?.["meetingaccesstoken"]).toBe("[redacted]");
    expect(relayCalls[1]?.query?.["code"]).toBe("[redacted]");
  });

  it("lists live tokens and omits expired ones", async () => {
    const live = await mint({ basic: BASIC }, { clientName: "list-live" });
    const short = await mint({ basic: BASIC }, { durationMs: 1, clientName: "list-short" });
    await new Promise((r) => setTimeout(r, 10));
    const list = await relay.listAccessTokens(BASIC);
    const names = list.map((t) => t.accessToken);
    expect(names).toContain(live.accessToken);
    expect(names).not.toContain(short.accessToken);
  });

  it("looks up the enterprise with a token in a header or in the query", async () => {
    const t = await mint({ basic: BASIC });
    const viaHeader = await relay.getEnterpriseSelf(t.accessToken);
    expect(viaHeader).toEqual({
      id: "1001",
      name: "sandbox",
      label: expect.any(String),
      password: null,
      tags: [],
      publicKey: null,
      pointOfContact: expect.stringMatching(/@/),
    });
    const viaQuery = await relay.getEnterpriseSelf(t.accessToken, { via: "query" });
    expect(viaQuery).toEqual(viaHeader);
    const lookups = (await h.log()).filter((e) => e.path === "/api/enterprises/self");
    expect(lookups.map((e) => e.query)).toEqual([undefined, { accesstoken: "[redacted]" }]);
  });
});

describe("relay: errors", () => {
  it("answers wrong Basic credentials with BadCredentialsException", async () => {
    const err = await h.failure(relay.createAccessToken({ basic: WRONG }), "wrong basic");
    expect(err).toBeInstanceOf(RelayError);
    expect(err).toMatchObject({
      errorName: "BadCredentialsException",
      status: 401,
      errorCode: 1285563821,
      known: true,
      userMessage: RELAY_ERROR_CATALOG.BadCredentialsException.userMessage,
    });
    expect(Object.keys((err as RelayError).details ?? {}).sort()).toEqual([
      "errorCode",
      "errorMessage",
    ]);
    const list = await h.failure(relay.listAccessTokens(WRONG), "wrong basic list");
    expect(list).toMatchObject({ errorName: "BadCredentialsException", attempts: 1 });
  });

  it("answers an unknown token with BadCredentialsException", async () => {
    secrets.add("not-a-token-77aa1");
    const err = await h.failure(relay.getEnterpriseSelf("not-a-token-77aa1", { via: "query" }));
    expect(err).toMatchObject({ errorName: "BadCredentialsException", status: 401 });
    expect((err as RelayError).request.url).not.toContain("not-a-token");
  });

  it("answers an unknown role with Invalid, and its details", async () => {
    const err = await h.failure(
      relay.createAccessToken({ basic: BASIC }, { roles: ["ROLE_ROOT"] }),
    );
    expect(err).toMatchObject({ errorName: "Invalid", status: 400, errorCode: 1782937293 });
    expect(Object.keys((err as RelayError).details ?? {}).sort()).toEqual(["cause", "message"]);
  });

  it.each(RELAY_ERROR_NAMES)("parses the injected catalog error %s", async (name) => {
    const entry = RELAY_ERROR_CATALOG[name];
    await h.addFault({ service: "relay", error: name });
    const err = await h.failure(relay.createAccessToken({ basic: BASIC }), `fault ${name}`);
    expect(err).toBeInstanceOf(RelayError);
    const e = err as RelayError;
    expect(e.name).toBe("RelayError");
    expect(e).toMatchObject({ errorName: name, status: entry.status, errorCode: entry.errorCode });
    expect(e.known).toBe(true);
    expect(e.attempts).toBe(1);
    expect(e.userMessage).toBe(entry.userMessage);
    if (entry.detailsKeys === null) expect(e.details).toBeNull();
    else expect(Object.keys(e.details ?? {}).sort()).toEqual([...entry.detailsKeys].sort());
    expect(e.message).toContain(name);
  });

  it("retries a GET through a transient 503 and succeeds", async () => {
    await h.addFault({ service: "relay", status: 503, times: 2 });
    const list = await relay.listAccessTokens(BASIC);
    expect(Array.isArray(list)).toBe(true);
    const entries = await h.log();
    expect(entries.map((e) => e.status)).toEqual([503, 503, 200]);
  });

  it("does not retry a GET on a catalog error a retry cannot change", async () => {
    const permanent = RELAY_ERROR_NAMES.find(
      (n) => RELAY_ERROR_CATALOG[n].status >= 500 && !RELAY_TRANSIENT_ERRORS.has(n),
    )!;
    await h.addFault({ service: "relay", error: permanent, times: 3 });
    const err = await h.failure(relay.listAccessTokens(BASIC));
    expect(err).toMatchObject({ errorName: permanent, attempts: 1 });
    expect(await h.log()).toHaveLength(1);
  });

  it("does not resend a token POST that failed with 503", async () => {
    await h.addFault({ service: "relay", status: 503, times: 2 });
    const err = await h.failure(relay.createAccessToken({ basic: BASIC }));
    expect(err).toMatchObject({ status: 503, attempts: 1 });
    const entries = await h.log();
    expect(entries).toHaveLength(1);
  });

  it("turns a delay beyond the timeout into a timeout error", async () => {
    const slow = createRelayClient({
      baseUrl: h.sandbox.relayBaseUrl,
      http: createHttp({
        retryPolicy: RETRY_POLICIES.none,
        timeouts: { attemptMs: 100 },
        logger: h.scanner.logger,
      }),
    });
    await h.addFault({ service: "relay", delayMs: 2_000 });
    const err = await h.failure(slow.listAccessTokens(BASIC), "relay timeout");
    expect(err).toBeInstanceOf(UpstreamTimeoutError);
    expect(err).toMatchObject({ service: "relay", code: "upstream_timeout" });
  });
});

describe("relay: answers the sandbox never sends", async () => {
  const server = await startLocalServer((r, res) => {
    if (r.url.startsWith("/bad-schema")) {
      json(res, 200, {
        accessToken: "tok-local-1",
        clientName: null,
        creationDate: 1,
        enterpriseName: "x",
        expirationDate: "never",
        roles: ["ROLE_READONLY"],
      });
    } else if (r.url.startsWith("/html")) {
      res.writeHead(502, { "content-type": "text/html" });
      res.end("<html><body>Bad gateway</body></html>");
    } else {
      json(res, 409, {
        errorCode: 5,
        errorName: "BrandNewError",
        errorMessage: "new",
        errorDetails: { a: 1 },
      });
    }
  });
  afterAll(() => server.close());
  const local = (path: string) =>
    createRelayClient({ baseUrl: `${server.url}${path}`, http: h.httpNoRetry });

  it("names the field of a malformed AccessToken", async () => {
    const err = await h.failure(local("/bad-schema").createAccessToken({ basic: BASIC }));
    expect(err).toBeInstanceOf(UpstreamSchemaError);
    expect((err as UpstreamSchemaError).issues.map((i) => i.path)).toEqual(["expirationDate"]);
    expect((err as Error).message).toContain("expirationDate");
  });

  it("still gives a usable error for a non-JSON error body or an unknown errorName", async () => {
    const html = await h.failure(local("/html").listAccessTokens(BASIC));
    expect(html).toBeInstanceOf(RelayError);
    expect(html).toMatchObject({ status: 502, errorName: undefined, known: false });
    expect((html as RelayError).userMessage).toMatch(/Try again/);
    const unknown = await h.failure(local("/other").listAccessTokens(BASIC));
    expect(unknown).toMatchObject({
      status: 409,
      errorName: "BrandNewError",
      known: false,
      details: { a: 1 },
    });
  });
});

describe("relay: secrets", () => {
  it("leaked no credential into any log line, error message or serialised error", () => {
    expect(h.scanner.texts.length).toBeGreaterThan(50);
    expect(h.scanner.texts.some((t) => t.where === "log")).toBe(true);
    h.scanner.assertNoSecrets([...secrets]);
  });
});
