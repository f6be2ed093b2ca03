import { scrub } from "../log.ts";
import { redactedRequestLine } from "./calllog.ts";
import { relayErrorReply } from "./faults.ts";
import {
  header,
  parseJson,
  type Reply,
  randomToken,
  type ServiceCall,
  secretEquals,
  tokenKey,
} from "./http.ts";
import { SANDBOX_ENTERPRISE, SANDBOX_SEEDS } from "./seeds.ts";

export const RELAY_ROLES = ["ROLE_READONLY", "ROLE_READWRITE"] as const;
export const DEFAULT_RELAY_ROLES = ["ROLE_READWRITE", "ROLE_READONLY"] as const;
const DAY_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_TOKEN_MS = 14 * DAY_MS;
export const PAIRING_TOKEN_MS = DAY_MS;

/** The AccessToken resource of the relay spec. */
export interface RelayAccessToken {
  accessToken: string;
  clientName: string | null;
  creationDate: number;
  enterpriseName: string;
  expirationDate: number | null;
  roles: string[];
}

export interface RelayDeps {
  now(): number;
  /** True for an access token the sandbox's events service granted and that has not expired. */
  isLiveEventsToken(token: string): boolean;
}

const BAD_CREDENTIALS = "Bad credentials";
const NOT_AUTHENTICATED = "Full authentication is required to access this resource";

const badCredentials = () => relayErrorReply("BadCredentialsException", BAD_CREDENTIALS);
const notAuthenticated = () => relayErrorReply("NotAuthenticated", NOT_AUTHENTICATED);

/** Checks a `Basic` Authorization header against the seeded pair, in constant time. */
function basicIsValid(value: string): boolean {
  const encoded = value.slice("basic ".length).trim();
  const decoded = Buffer.from(encoded, "base64").toString("utf8");
  const { username, password } = SANDBOX_SEEDS.relay;
  // A re-encode that differs means the header was not base64 at all.
  if (Buffer.from(decoded, "utf8").toString("base64") !== encoded) return false;
  return secretEquals(decoded, `${username}:${password}`);
}

function basicHeader(call: ServiceCall): string | undefined {
  const value = header(call.headers, "authorization");
  return value !== undefined && /^basic\s/i.test(value) ? value : undefined;
}

export function createRelayService(deps: RelayDeps) {
  const tokens = new Map<string, RelayAccessToken>();

  const isLive = (t: RelayAccessToken) =>
    t.expirationDate === null || deps.now() < t.expirationDate;

  function invalid(call: ServiceCall, message: string): Reply {
    return relayErrorReply("Invalid", message, {
      message: scrub(message),
      cause: redactedRequestLine(call.method, call.path, call.query),
    });
  }

  /** A body is optional on every relay operation, but when one is sent it must be JSON. */
  function malformedBody(call: ServiceCall): Reply | undefined {
    if (call.rawBody.length === 0 || parseJson(call.rawBody) !== undefined) return undefined;
    return relayErrorReply("JsonParseException", "Malformed JSON request body");
  }

  function createToken(call: ServiceCall): Reply {
    const basic = basicHeader(call);
    const meetingTokens = call.query.getAll("meetingaccesstoken");
    const meeting = meetingTokens.length > 0;
    if (basic === undefined && !meeting) return notAuthenticated();
    if (basic !== undefined && !basicIsValid(basic)) return badCredentials();
    if (!meetingTokens.every((t) => deps.isLiveEventsToken(t))) return badCredentials();
    const bad = malformedBody(call);
    if (bad) return bad;

    let roles: string[] = [...DEFAULT_RELAY_ROLES];
    if (call.query.has("roles")) {
      roles = call.query
        .getAll("roles")
        .join(",")
        .split(",")
        .map((r) => r.trim());
      if (roles.some((r) => r === "")) return invalid(call, "roles must not contain empty values");
      const unknown = roles.find((r) => !(RELAY_ROLES as readonly string[]).includes(r));
      if (unknown !== undefined) {
        return invalid(call, `Unknown role ${unknown}; known roles: ${RELAY_ROLES.join(", ")}`);
      }
      roles = [...new Set(roles)];
    }

    let duration = 0;
    const durations = call.query.getAll("duration");
    if (durations.length > 1) return invalid(call, "duration must be given once");
    if (durations.length === 1) {
      const raw = durations[0]!;
      const n = /^-?\d+$/.test(raw) ? Number(raw) : Number.NaN;
      if (!Number.isSafeInteger(n) || n < -1) {
        return invalid(call, "duration must be an integer number of milliseconds, or -1");
      }
      duration = n;
    }

    const codes = call.query.getAll("code");
    const pairing = codes.length > 0;
    if (pairing) {
      if (!meeting) {
        return invalid(call, "code (zero-touch pairing) requires meetingaccesstoken");
      }
      if (codes.length > 1 || codes[0] === "") return invalid(call, "code must be given once");
    }

    const now = deps.now();
    let expirationDate: number | null;
    // A pairing token is valid one day whatever duration says (spec: Limits).
    if (pairing) expirationDate = now + PAIRING_TOKEN_MS;
    else if (duration === -1) expirationDate = null;
    else expirationDate = now + (duration === 0 ? DEFAULT_TOKEN_MS : duration);
    if (expirationDate !== null && !Number.isSafeInteger(expirationDate)) {
      return invalid(call, "duration is too large");
    }

    const clientNames = call.query.getAll("clientname");
    const token: RelayAccessToken = {
      accessToken: randomToken(24),
      clientName: clientNames.length > 0 ? clientNames.join(",") : null,
      creationDate: now,
      enterpriseName: SANDBOX_SEEDS.relay.username,
      expirationDate,
      roles,
    };
    tokens.set(tokenKey(token.accessToken), token);
    return { status: 200, json: token };
  }

  function listTokens(call: ServiceCall): Reply {
    const basic = basicHeader(call);
    if (basic === undefined) return notAuthenticated();
    if (!basicIsValid(basic)) return badCredentials();
    const bad = malformedBody(call);
    if (bad) return bad;
    return { status: 200, json: [...tokens.values()].filter(isLive) };
  }

  function enterpriseSelf(call: ServiceCall): Reply {
    const given = [header(call.headers, "x-access-token"), ...call.query.getAll("accesstoken")];
    const presented = given.filter((t): t is string => t !== undefined);
    if (presented.length === 0) return notAuthenticated();
    for (const t of presented) {
      const found = tokens.get(tokenKey(t));
      if (found === undefined || !isLive(found)) return badCredentials();
    }
    const bad = malformedBody(call);
    if (bad) return bad;
    return { status: 200, json: { ...SANDBOX_ENTERPRISE, tags: [] } };
  }

  return function handle(call: ServiceCall): Reply {
    if (call.path === "/api/auth/accesstokens") {
      if (call.method === "POST") return createToken(call);
      if (call.method === "GET") return listTokens(call);
    } else if (call.path === "/api/enterprises/self" && call.method === "GET") {
      return enterpriseSelf(call);
    }
    // The spec shows no other operation; the relay says so with its own NotFound.
    const what = `${call.method} ${scrub(call.path)}`;
    return relayErrorReply("NotFound", `No handler for ${what}`, {
      entityClass: "Operation",
      entityId: what,
    });
  };
}
