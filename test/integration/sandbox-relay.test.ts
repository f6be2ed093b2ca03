import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type SandboxServer, startSandboxServer } from "../../src/sandbox/index.ts";
import { RELAY_ERROR_CATALOG, type RelayErrorName } from "../../src/upstream/relay/catalog.ts";

const DAY = 24 * 60 * 60 * 1000;
const BASIC = `Basic ${Buffer.from("sandbox:sandbox").toString("base64")}`;

let clock = 1_800_000_000_000;
let server: SandboxServer;
let relay: string;
let events: string;

beforeAll(async () => {
  server = await startSandboxServer({ now: () => clock });
  relay = server.relayBaseUrl;
  events = server.eventsBaseUrl;
});
afterAll(() => server.close());
beforeEach(() => {
  clock += DAY * 365; // every test starts after all earlier tokens have expired
});

async function json(res: Response): Promise<Record<string, unknown>> {
  expect(res.headers.get("content-type")).toBe("application/json");
  return (await res.json()) as Record<string, unknown>;
}

/** Asserts the full relay error shape: status, four fields, code and exactly the catalog's keys. */
async function expectRelayError(res: Response, name: RelayErrorName) {
  const entry = RELAY_ERROR_CATALOG[name];
  expect(res.status).toBe(entry.status);
  const body = await json(res);
  expect(Object.keys(body).sort()).toEqual(
    ["errorCode", "errorDetails", "errorMessage", "errorName"].sort(),
  );
  expect(body.errorName).toBe(name);
  expect(body.errorCode).toBe(entry.errorCode);
  expect(typeof body.errorMessage).toBe("string");
  if (entry.detailsKeys === null) expect(body.errorDetails).toBeNull();
  else {
    const details = body.errorDetails as Record<string, unknown>;
    expect(Object.keys(details).sort()).toEqual([...entry.detailsKeys].sort());
  }
  return body;
}

function createToken(query = "", headers: Record<string, string> = { authorization: BASIC }) {
  return fetch(`${relay}/api/auth/accesstokens${query}`, { method: "POST", headers });
}

async function eventsToken(grant: "user_app" | "enterprise_app"): Promise<string> {
  const properties: Record<string, string> = {
    client_id: "sandbox-key",
    client_secret: "sandbox-secret",
  };
  if (grant === "user_app") properties.user_email = "relay-user@example.com";
  const res = await fetch(`${events}/api/security/v1/oauth/accesstoken`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({ grant_type: grant, properties }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

describe("relay sandbox: POST /api/auth/accesstokens", () => {
  it("with Basic and no parameters: 2 weeks, both roles, clientName null, enterprise sandbox", async () => {
    const res = await createToken();
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(Object.keys(body).sort()).toEqual(
      [
        "accessToken",
        "clientName",
        "creationDate",
        "enterpriseName",
        "expirationDate",
        "roles",
      ].sort(),
    );
    expect(typeof body.accessToken).toBe("string");
    expect((body.accessToken as string).length).toBeGreaterThan(20);
    expect(body.clientName).toBeNull();
    expect(body.creationDate).toBe(clock);
    expect(body.enterpriseName).toBe("sandbox");
    expect(body.expirationDate).toBe(clock + 14 * DAY);
    expect(body.roles).toEqual(["ROLE_READWRITE", "ROLE_READONLY"]);
  });

  it("duration: 0 gives the default, -1 never expires (null), N ms is kept", async () => {
    expect((await json(await createToken("?duration=0"))).expirationDate).toBe(clock + 14 * DAY);
    expect((await json(await createToken("?duration=-1"))).expirationDate).toBeNull();
    expect((await json(await createToken("?duration=60000"))).expirationDate).toBe(clock + 60_000);
  });

  it.each(["abc", "1.5", "-2", "", "1e3", "99999999999999999999"])(
    "duration=%s is 400 Invalid",
    async (d) => {
      const body = await expectRelayError(await createToken(`?duration=${d}`), "Invalid");
      const details = body.errorDetails as { message: string; cause: string };
      expect(details.message).toMatch(/duration/);
      expect(details.cause).toContain("POST /api/auth/accesstokens");
    },
  );

  it("roles: a subset, both in any order, unknown or empty roles are 400 Invalid", async () => {
    expect((await json(await createToken("?roles=ROLE_READONLY"))).roles).toEqual([
      "ROLE_READONLY",
    ]);
    expect((await json(await createToken("?roles=ROLE_READONLY,ROLE_READWRITE"))).roles).toEqual([
      "ROLE_READONLY",
      "ROLE_READWRITE",
    ]);
    await expectRelayError(await createToken("?roles=ROLE_ADMIN"), "Invalid");
    await expectRelayError(await createToken("?roles=ROLE_READONLY,ROLE_ADMIN"), "Invalid");
    await expectRelayError(await createToken("?roles="), "Invalid");
  });

  it("clientname is stored and listed", async () => {
    const body = await json(await createToken("?clientname=Lobby%20screen"));
    expect(body.clientName).toBe("Lobby screen");
    const list = (await (
      await fetch(`${relay}/api/auth/accesstokens`, { headers: { authorization: BASIC } })
    ).json()) as Array<Record<string, unknown>>;
    expect(list.find((t) => t.accessToken === body.accessToken)?.clientName).toBe("Lobby screen");
  });

  it("meetingaccesstoken: user-level and enterprise-level events tokens both work", async () => {
    for (const grant of ["user_app", "enterprise_app"] as const) {
      const t = await eventsToken(grant);
      const res = await createToken(`?meetingaccesstoken=${encodeURIComponent(t)}`, {});
      expect(res.status).toBe(200);
      expect((await json(res)).expirationDate).toBe(clock + 14 * DAY);
    }
  });

  it("meetingaccesstoken that is unknown or expired is 401 BadCredentialsException", async () => {
    await expectRelayError(
      await createToken("?meetingaccesstoken=not-a-token", {}),
      "BadCredentialsException",
    );
    const t = await eventsToken("user_app");
    clock += 3600 * 1000;
    await expectRelayError(
      await createToken(`?meetingaccesstoken=${encodeURIComponent(t)}`, {}),
      "BadCredentialsException",
    );
  });

  it("code (zero-touch pairing) gives a 1-day token, and only with meetingaccesstoken", async () => {
    const t = await eventsToken("user_app");
    const res = await createToken(`?meetingaccesstoken=${encodeURIComponent(t)}&code=483921`, {});
    expect(res.status).toBe(200);
    expect((await json(res)).expirationDate).toBe(clock + DAY);
    const invalid = await expectRelayError(await createToken("?code=483921"), "Invalid");
    expect(JSON.stringify(invalid)).not.toContain("483921");
  });

  it("request text echoed in errorDetails has credentials redacted", async () => {
    const t = await eventsToken("enterprise_app");
    const res = await createToken(`?roles=NOPE&meetingaccesstoken=${encodeURIComponent(t)}`, {});
    const body = await expectRelayError(res, "Invalid");
    const text = JSON.stringify(body);
    expect(text).not.toContain(t);
    expect((body.errorDetails as { cause: string }).cause).toContain(
      "meetingaccesstoken=[redacted]",
    );
  });

  it("no credentials is 401 NotAuthenticated; a wrong or malformed Basic pair is BadCredentialsException", async () => {
    const none = await expectRelayError(await createToken("", {}), "NotAuthenticated");
    expect(none.errorDetails).toEqual({
      errorMessage: none.errorMessage,
      errorCode: RELAY_ERROR_CATALOG.NotAuthenticated.errorCode,
    });
    const wrong = `Basic ${Buffer.from("sandbox:nope").toString("base64")}`;
    const bad = await expectRelayError(
      await createToken("", { authorization: wrong }),
      "BadCredentialsException",
    );
    expect(bad.errorDetails).toEqual({
      errorMessage: bad.errorMessage,
      errorCode: RELAY_ERROR_CATALOG.BadCredentialsException.errorCode,
    });
    const other = `Basic ${Buffer.from("admin:sandbox").toString("base64")}`;
    await expectRelayError(
      await createToken("", { authorization: other }),
      "BadCredentialsException",
    );
    await expectRelayError(
      await createToken("", { authorization: "Basic !!!not-base64" }),
      "BadCredentialsException",
    );
    // A Bearer header is not a credential this service takes: as if none were sent.
    await expectRelayError(
      await createToken("", { authorization: "Bearer abc" }),
      "NotAuthenticated",
    );
  });

  it("a malformed JSON body is 500 JsonParseException with errorDetails null; valid JSON is ignored", async () => {
    const res = await fetch(`${relay}/api/auth/accesstokens`, {
      method: "POST",
      headers: { authorization: BASIC, "content-type": "application/json" },
      body: "{not json",
    });
    const body = await expectRelayError(res, "JsonParseException");
    expect(body.errorDetails).toBeNull();
    const ok = await fetch(`${relay}/api/auth/accesstokens`, {
      method: "POST",
      headers: { authorization: BASIC, "content-type": "application/json" },
      body: "{}",
    });
    expect(ok.status).toBe(200);
  });
});

describe("relay sandbox: GET /api/auth/accesstokens", () => {
  it("lists the enterprise's live tokens and leaves expired ones out", async () => {
    const short = await json(await createToken("?duration=1000&clientname=short"));
    const forever = await json(await createToken("?duration=-1&clientname=forever"));
    const list = async () =>
      (await (
        await fetch(`${relay}/api/auth/accesstokens`, { headers: { authorization: BASIC } })
      ).json()) as Array<Record<string, unknown>>;
    let tokens = (await list()).map((t) => t.accessToken);
    expect(tokens).toContain(short.accessToken);
    expect(tokens).toContain(forever.accessToken);
    clock += 1000;
    tokens = (await list()).map((t) => t.accessToken);
    expect(tokens).not.toContain(short.accessToken);
    expect(tokens).toContain(forever.accessToken);
    for (const t of await list()) {
      expect(t.expirationDate === null || (t.expirationDate as number) > clock).toBe(true);
      expect(t.enterpriseName).toBe("sandbox");
    }
  });

  it("takes Basic only", async () => {
    const token = (await json(await createToken())).accessToken as string;
    await expectRelayError(
      await fetch(`${relay}/api/auth/accesstokens`, { headers: { "x-access-token": token } }),
      "NotAuthenticated",
    );
    await expectRelayError(await fetch(`${relay}/api/auth/accesstokens`), "NotAuthenticated");
    await expectRelayError(
      await fetch(`${relay}/api/auth/accesstokens`, {
        headers: { authorization: `Basic ${Buffer.from("x:y").toString("base64")}` },
      }),
      "BadCredentialsException",
    );
  });
});

describe("relay sandbox: GET /api/enterprises/self", () => {
  const ENTERPRISE = {
    id: "1001",
    name: "sandbox",
    label: "Sandbox Enterprise",
    password: null,
    tags: [],
    publicKey: null,
    pointOfContact: "admin@example.com",
  };

  it("answers the Enterprise for a token in the query or the X-Access-Token header", async () => {
    const token = (await json(await createToken())).accessToken as string;
    const byQuery = await fetch(`${relay}/api/enterprises/self?accesstoken=${token}`);
    expect(byQuery.status).toBe(200);
    expect(await json(byQuery)).toEqual(ENTERPRISE);
    const byHeader = await fetch(`${relay}/api/enterprises/self`, {
      headers: { "x-access-token": token },
    });
    expect(byHeader.status).toBe(200);
    expect(await json(byHeader)).toEqual(ENTERPRISE);
  });

  it("an expired or unknown token is 401 BadCredentialsException; none is NotAuthenticated", async () => {
    const token = (await json(await createToken("?duration=5000"))).accessToken as string;
    expect((await fetch(`${relay}/api/enterprises/self?accesstoken=${token}`)).status).toBe(200);
    clock += 5000;
    await expectRelayError(
      await fetch(`${relay}/api/enterprises/self?accesstoken=${token}`),
      "BadCredentialsException",
    );
    await expectRelayError(
      await fetch(`${relay}/api/enterprises/self`, { headers: { "x-access-token": "nope" } }),
      "BadCredentialsException",
    );
    await expectRelayError(await fetch(`${relay}/api/enterprises/self`), "NotAuthenticated");
    // Basic is not an access token: this operation takes tokens only.
    await expectRelayError(
      await fetch(`${relay}/api/enterprises/self`, { headers: { authorization: BASIC } }),
      "NotAuthenticated",
    );
  });

  it("a never-expiring token keeps working", async () => {
    const token = (await json(await createToken("?duration=-1"))).accessToken as string;
    clock += 10 * 365 * DAY;
    expect((await fetch(`${relay}/api/enterprises/self?accesstoken=${token}`)).status).toBe(200);
  });
});

describe("relay sandbox: anything else", () => {
  it("an unknown path or method is 404 NotFound with entityClass and entityId", async () => {
    const body = await expectRelayError(
      await fetch(`${relay}/api/endpoints`, { headers: { authorization: BASIC } }),
      "NotFound",
    );
    expect(body.errorDetails).toEqual({
      entityClass: "Operation",
      entityId: "GET /api/endpoints",
    });
    await expectRelayError(
      await fetch(`${relay}/api/auth/accesstokens`, {
        method: "DELETE",
        headers: { authorization: BASIC },
      }),
      "NotFound",
    );
  });
});
