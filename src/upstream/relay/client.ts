import { parseRelayErrorBody } from "../errors.ts";
import type { Http } from "../http.ts";
import { isRelayErrorName, RELAY_TRANSIENT_ERRORS } from "./catalog.ts";
import {
  type AccessToken,
  accessTokenListSchema,
  accessTokenSchema,
  type Enterprise,
  enterpriseSchema,
} from "./schemas.ts";

export interface BasicCredentials {
  username: string;
  password: string;
}

export type RelayAuth = { basic: BasicCredentials } | { meetingAccessToken: string };

export interface CreateAccessTokenOptions {
  /** Default (server side): ROLE_READWRITE,ROLE_READONLY. */
  roles?: readonly string[];
  /** Validity in ms; omitted or 0 = 2 weeks, -1 = never expires. */
  durationMs?: number;
  clientName?: string;
  /** Zero-touch pairing code; only meaningful with a meeting access token. */
  code?: string;
}

export interface RelayClient {
  createAccessToken(auth: RelayAuth, opts?: CreateAccessTokenOptions): Promise<AccessToken>;
  listAccessTokens(basic: BasicCredentials): Promise<AccessToken[]>;
  /** `via: "header"` (default) keeps the token out of URLs, where proxies log them. */
  getEnterpriseSelf(accessToken: string, opts?: { via?: "query" | "header" }): Promise<Enterprise>;
}

export function basicAuthorization({ username, password }: BasicCredentials): string {
  return `Basic ${Buffer.from(`${username}:${password}`, "utf8").toString("base64")}`;
}

/** A relay error body naming a non-transient catalog error is final; anything else may pass. */
function relayRetryable(_status: number, bodyText: string): boolean {
  const parsed = parseRelayErrorBody(bodyText);
  if (!parsed || !isRelayErrorName(parsed.errorName)) return true;
  return RELAY_TRANSIENT_ERRORS.has(parsed.errorName);
}

export function createRelayClient({ baseUrl, http }: { baseUrl: string; http: Http }): RelayClient {
  const base = baseUrl.replace(/\/+$/, "");
  const TOKENS = "/api/auth/accesstokens";
  const SELF = "/api/enterprises/self";

  return {
    async createAccessToken(auth, opts = {}) {
      const res = await http.request({
        service: "relay",
        method: "POST",
        url: `${base}${TOKENS}`,
        route: TOKENS,
        query: {
          meetingaccesstoken: "meetingAccessToken" in auth ? auth.meetingAccessToken : undefined,
          roles: opts.roles?.length ? opts.roles.join(",") : undefined,
          duration: opts.durationMs,
          clientname: opts.clientName,
          code: opts.code,
        },
        headers: { authorization: "basic" in auth ? basicAuthorization(auth.basic) : undefined },
        schema: accessTokenSchema,
        expectStatus: [200],
        // Each successful POST mints a token, so it is resent only when provably unsent.
        retry: "safe-post",
        shouldRetryResponse: relayRetryable,
      });
      return res.body;
    },

    async listAccessTokens(basic) {
      const res = await http.request({
        service: "relay",
        method: "GET",
        url: `${base}${TOKENS}`,
        route: TOKENS,
        headers: { authorization: basicAuthorization(basic) },
        schema: accessTokenListSchema,
        expectStatus: [200],
        shouldRetryResponse: relayRetryable,
      });
      return res.body;
    },

    async getEnterpriseSelf(accessToken, opts = {}) {
      const viaQuery = opts.via === "query";
      const res = await http.request({
        service: "relay",
        method: "GET",
        url: `${base}${SELF}`,
        route: SELF,
        query: viaQuery ? { accesstoken: accessToken } : undefined,
        headers: viaQuery ? undefined : { "x-access-token": accessToken },
        schema: enterpriseSchema,
        expectStatus: [200],
        shouldRetryResponse: relayRetryable,
      });
      return res.body;
    },
  };
}
