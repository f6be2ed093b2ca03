/**
 * Why this file is long: the whole upstream error family (classes, codes, the factory that maps a
 * response to a class, and the redaction every error applies) is one contract; callers import
 * it from one place.
 */
import { isSecretName, REDACTED, redactBody, scrub } from "../log.ts";
import { isRelayErrorName, RELAY_ERROR_CATALOG, type RelayErrorName } from "./relay/catalog.ts";

/**
 * The upstream error family. Every error carries a redacted copy of the request (as
 * octokit's RequestError does) and keeps two texts apart (as stripe-node does): `message`
 * for the log, `userMessage` for a Slack user. Neither ever holds a credential.
 */

export type UpstreamService = "relay" | "events";

export const UPSTREAM_ERROR_CODES = {
  timeout: "upstream_timeout",
  network: "upstream_network",
  httpStatus: "upstream_http_status",
  schemaMismatch: "upstream_schema_mismatch",
  relay: "upstream_relay_error",
  events: "upstream_events_error",
} as const;
export type UpstreamErrorCode = (typeof UPSTREAM_ERROR_CODES)[keyof typeof UPSTREAM_ERROR_CODES];

/** What an error may say about the request: never the caller's object, never a credential. */
export interface RedactedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: unknown;
}

const SERVICE_LABEL: Record<UpstreamService, string> = {
  relay: "the relay service",
  events: "the live events service",
};

/** Query parameter, header and body keys whose values are credentials: log.ts's one list. */
export { isSecretName };

/** The URL with credentials in userinfo or secret-named query values replaced. */
export function redactUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    // Not a URL: keep nothing after a "?" so a stray query string cannot leak.
    return scrub(url.split("?", 1)[0] ?? "");
  }
  const parts: string[] = [];
  for (const [k, v] of u.searchParams) {
    parts.push(
      `${encodeURIComponent(k)}=${isSecretName(k) ? REDACTED : encodeURIComponent(scrub(v))}`,
    );
  }
  const auth = u.username || u.password ? `${REDACTED}@` : "";
  return `${u.protocol}//${auth}${u.host}${u.pathname}${parts.length ? `?${parts.join("&")}` : ""}`;
}

export function redactHeaders(
  headers: Readonly<Record<string, string | undefined>> | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {})) {
    if (v === undefined || isSecretName(k)) continue;
    out[k.toLowerCase()] = scrub(v);
  }
  return out;
}

export function redactRequest(req: {
  method: string;
  url: string;
  headers?: Readonly<Record<string, string | undefined>>;
  body?: unknown;
}): RedactedRequest {
  const r: {
    method: string;
    url: string;
    headers: Record<string, string>;
    body?: unknown;
  } = {
    method: req.method.toUpperCase(),
    url: redactUrl(req.url),
    headers: redactHeaders(req.headers),
  };
  if (req.body !== undefined) r.body = redactBody(req.body);
  return r;
}

interface UpstreamErrorInit {
  service: UpstreamService;
  request: RedactedRequest;
  /** For the log. Scrubbed again on the way in. */
  message: string;
  /** One plain sentence plus a next step, for a Slack user. */
  userMessage: string;
  status?: number | undefined;
  /** Which attempt (1-based) produced this error, after any retries. */
  attempts?: number | undefined;
  cause?: unknown;
}

export class UpstreamError extends Error {
  override readonly name: string = this.constructor.name;
  readonly code: UpstreamErrorCode;
  readonly service: UpstreamService;
  readonly status: number | undefined;
  readonly request: RedactedRequest;
  readonly userMessage: string;
  readonly attempts: number;

  constructor(code: UpstreamErrorCode, init: UpstreamErrorInit) {
    super(scrub(init.message), init.cause === undefined ? undefined : { cause: init.cause });
    this.code = code;
    this.service = init.service;
    this.status = init.status;
    this.request = init.request;
    this.userMessage = init.userMessage;
    this.attempts = init.attempts ?? 1;
  }

  /** What JSON.stringify (and thus a JSON log line) shows: no stack, no cause internals. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      code: this.code,
      message: this.message,
      service: this.service,
      status: this.status,
      request: this.request,
      userMessage: this.userMessage,
      attempts: this.attempts,
    };
  }
}

export type TimeoutPhase = "connect" | "headers" | "body";

export class UpstreamTimeoutError extends UpstreamError {
  readonly phase: TimeoutPhase;
  constructor(init: Omit<UpstreamErrorInit, "userMessage" | "message"> & { phase: TimeoutPhase }) {
    super(UPSTREAM_ERROR_CODES.timeout, {
      ...init,
      message: `${init.service} ${init.request.method} ${init.request.url}: timed out waiting for ${init.phase}`,
      userMessage: `${capitalise(SERVICE_LABEL[init.service])} took too long to answer. Try again in a minute.`,
    });
    this.phase = init.phase;
  }
}

export class UpstreamNetworkError extends UpstreamError {
  /** The system or undici error code, e.g. ECONNREFUSED, UND_ERR_SOCKET. */
  readonly networkCode: string | undefined;
  /** True when the request provably never reached the server (nothing was sent). */
  readonly notSent: boolean;
  constructor(
    init: Omit<UpstreamErrorInit, "userMessage" | "message"> & {
      networkCode: string | undefined;
      notSent: boolean;
    },
  ) {
    super(UPSTREAM_ERROR_CODES.network, {
      ...init,
      message: `${init.service} ${init.request.method} ${init.request.url}: network error ${init.networkCode ?? "unknown"}`,
      userMessage: `On Air could not reach ${SERVICE_LABEL[init.service]}. Try again in a few minutes; if it persists, tell your workspace admin.`,
    });
    this.networkCode = init.networkCode;
    this.notSent = init.notSent;
  }
}

export interface SchemaIssue {
  /** Dotted path into the body, e.g. `roles[0]`; `(body)` for the whole body. */
  readonly path: string;
  readonly message: string;
}

/** A 2xx answer whose body does not match the contract. Names the fields, never their values. */
export class UpstreamSchemaError extends UpstreamError {
  readonly issues: readonly SchemaIssue[];
  constructor(
    init: Omit<UpstreamErrorInit, "userMessage" | "message"> & { issues: SchemaIssue[] },
  ) {
    const listed = init.issues
      .slice(0, 5)
      .map((i) => `${i.path}: ${i.message}`)
      .join("; ");
    super(UPSTREAM_ERROR_CODES.schemaMismatch, {
      ...init,
      message: `${init.service} ${init.request.method} ${init.request.url}: unexpected response body (${listed})`,
      userMessage: `${capitalise(SERVICE_LABEL[init.service])} sent an answer On Air does not understand. Try again later; if it persists, report it to the On Air maintainers.`,
    });
    this.issues = init.issues;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), issues: this.issues };
  }
}

/** Any answer with a status the caller did not expect. Subclasses read the body per service. */
export class UpstreamHttpError extends UpstreamError {
  declare readonly status: number;
  constructor(
    init: Omit<UpstreamErrorInit, "status" | "message" | "userMessage"> & {
      status: number;
      message?: string | undefined;
      userMessage?: string | undefined;
    },
    code: UpstreamErrorCode = UPSTREAM_ERROR_CODES.httpStatus,
  ) {
    super(code, {
      ...init,
      message:
        init.message ??
        `${init.service} ${init.request.method} ${init.request.url}: unexpected status ${init.status}`,
      userMessage:
        init.userMessage ??
        `${capitalise(SERVICE_LABEL[init.service])} gave an unexpected answer (HTTP ${init.status}). Try again later; if it persists, report it to the On Air maintainers.`,
    });
  }
}

export class RelayError extends UpstreamHttpError {
  /** The catalog name; undefined when the body was not a relay error body. */
  readonly errorName: string | undefined;
  readonly errorCode: number | undefined;
  readonly details: Readonly<Record<string, unknown>> | null;
  /** True when errorName is one of the 38 catalog entries. */
  readonly known: boolean;

  constructor(
    init: Omit<UpstreamErrorInit, "status" | "message" | "userMessage" | "service"> & {
      status: number;
      errorName: string | undefined;
      errorCode: number | undefined;
      errorMessage: string | undefined;
      details: Record<string, unknown> | null;
    },
  ) {
    const known = isRelayErrorName(init.errorName);
    const what =
      init.errorName === undefined
        ? `status ${init.status} without a relay error body`
        : `${init.errorName} (code ${init.errorCode ?? "?"})${init.errorMessage ? `: ${init.errorMessage}` : ""}`;
    super(
      {
        ...init,
        service: "relay",
        message: `relay ${init.request.method} ${init.request.url}: ${init.status} ${what}`,
        userMessage: known
          ? RELAY_ERROR_CATALOG[init.errorName as RelayErrorName].userMessage
          : relayFallbackMessage(init.status),
      },
      UPSTREAM_ERROR_CODES.relay,
    );
    this.errorName = init.errorName;
    this.errorCode = init.errorCode;
    this.details = init.details;
    this.known = known;
  }

  override toJSON(): Record<string, unknown> {
    return {
      ...super.toJSON(),
      errorName: this.errorName,
      errorCode: this.errorCode,
      details: this.details,
    };
  }
}

function relayFallbackMessage(status: number): string {
  if (status === 401) return RELAY_ERROR_CATALOG.BadCredentialsException.userMessage;
  if (status === 404) return "The relay could not find what was asked for. Check it and try again.";
  if (status === 429) return "The relay service is busy right now. Wait a minute and try again.";
  if (status >= 500)
    return "The relay service had a problem answering. Try again in a few minutes; if it persists, tell your relay admin.";
  return `The relay service turned the request down (HTTP ${status}). Check the values you entered and try again.`;
}

/** The events service sends no error bodies, so the status is all there is to go on. */
export const EVENTS_STATUS_MESSAGES: Readonly<Record<number, string>> = {
  400: "The live events service rejected the request as invalid. Check the values you entered and try again.",
  401: "The live events service did not accept On Air's access. Try again; if it keeps happening, a workspace admin should check the events app key and secret in `/onair settings`.",
  403: "The live events service does not allow this for your account. Ask your events admin whether your account and enterprise-level APIs are enabled.",
  404: "The live events service could not find that event or user. Check that it still exists, or run `/onair link` again.",
  409: "The live events service reported a conflict with the event's current state. Refresh the event and try again.",
  429: "The live events service is busy right now. Wait a minute and try again.",
  500: "The live events service had an internal error. Try again later; if it persists, contact the service operator.",
};

export function eventsUserMessage(status: number): string {
  const exact = EVENTS_STATUS_MESSAGES[status];
  if (exact) return exact;
  if (status >= 500)
    return "The live events service is unavailable right now. Try again in a few minutes; if it persists, contact the service operator.";
  return `The live events service turned the request down (HTTP ${status}). Check the values you entered and try again.`;
}

export class EventsError extends UpstreamHttpError {
  constructor(
    init: Omit<UpstreamErrorInit, "status" | "message" | "userMessage" | "service"> & {
      status: number;
      userMessage?: string | undefined;
    },
  ) {
    super(
      {
        ...init,
        service: "events",
        message: `events ${init.request.method} ${init.request.url}: ${init.status}`,
        userMessage: init.userMessage ?? eventsUserMessage(init.status),
      },
      UPSTREAM_ERROR_CODES.events,
    );
  }
}

export interface FailedResponse {
  service: UpstreamService;
  status: number;
  /** The raw body text (may be empty or not JSON). */
  bodyText: string;
  request: RedactedRequest;
  attempts?: number;
  /** Per-status words for the user that suit the operation better than the defaults. */
  userMessages?: Readonly<Partial<Record<number, string>>> | undefined;
}

/**
 * The one factory that turns an unexpected answer into the right class (after stripe-node's
 * generateV1Error): relay 4xx/5xx → RelayError (catalog or not, JSON or not), events 4xx/5xx →
 * EventsError, anything else → UpstreamHttpError.
 */
export function errorFromResponse(res: FailedResponse): UpstreamHttpError {
  const { service, status, request, attempts } = res;
  const override = res.userMessages?.[status];
  if (status >= 400 && service === "relay") {
    const parsed = parseRelayErrorBody(res.bodyText);
    return new RelayError({
      status,
      request,
      attempts,
      errorName: parsed?.errorName,
      errorCode: parsed?.errorCode,
      errorMessage: parsed?.errorMessage,
      details: parsed?.details ?? null,
    });
  }
  if (status >= 400 && service === "events") {
    return new EventsError({ status, request, attempts, userMessage: override });
  }
  return new UpstreamHttpError({ service, status, request, attempts, userMessage: override });
}

interface ParsedRelayError {
  errorName: string | undefined;
  errorCode: number | undefined;
  errorMessage: string | undefined;
  details: Record<string, unknown> | null;
}

/** Lenient on purpose: any part of an error body that is there is kept. */
export function parseRelayErrorBody(text: string): ParsedRelayError | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (json === null || typeof json !== "object" || Array.isArray(json)) return undefined;
  const o = json as Record<string, unknown>;
  const details = o["errorDetails"];
  const parsed: ParsedRelayError = {
    errorName: typeof o["errorName"] === "string" ? o["errorName"] : undefined,
    errorCode: typeof o["errorCode"] === "number" ? o["errorCode"] : undefined,
    errorMessage: typeof o["errorMessage"] === "string" ? o["errorMessage"] : undefined,
    details:
      details !== null && typeof details === "object" && !Array.isArray(details)
        ? (redactBody(details) as Record<string, unknown>)
        : null,
  };
  return parsed.errorName === undefined && parsed.errorCode === undefined ? undefined : parsed;
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
