/**
 * The one HTTP core for both upstream services: retry policies, the undici dispatcher with its
 * timeouts, and `request(opts, schema)`.
 *
 * Why this file is long: a request's life (timeouts per phase, retry decisions, Retry-After,
 * schema checks, redacted errors, metrics) is one sequence; split up, each part would need the
 * others' state passed back and forth.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { Agent, type Dispatcher, request as undiciRequest } from "undici";
import type { z } from "zod";
import type { Logger } from "../log.ts";
import {
  errorFromResponse,
  type RedactedRequest,
  redactRequest,
  type SchemaIssue,
  type TimeoutPhase,
  UpstreamError,
  UpstreamNetworkError,
  UpstreamSchemaError,
  type UpstreamService,
  UpstreamTimeoutError,
} from "./errors.ts";

/**
 * Named retry policies, as data (after node-slack-sdk's retry-policies). Delays grow
 * exponentially from baseMs by factor, capped at maxMs, with equal jitter. A Retry-After
 * longer than retryAfterCapMs is not waited for: the error goes back to the caller instead.
 */
export interface RetryPolicy {
  readonly retries: number;
  readonly baseMs: number;
  readonly factor: number;
  readonly maxMs: number;
  readonly jitter: boolean;
  readonly retryAfterCapMs: number;
}

export const RETRY_POLICIES = {
  /** 3 retries over about 1.4 s (200, 400, 800 ms, jittered); waits up to 30 s on Retry-After. */
  default: {
    retries: 3,
    baseMs: 200,
    factor: 2,
    maxMs: 5_000,
    jitter: true,
    retryAfterCapMs: 30_000,
  },
  /** For tests: the same decisions in milliseconds. */
  fast: { retries: 3, baseMs: 1, factor: 2, maxMs: 5, jitter: true, retryAfterCapMs: 50 },
  none: { retries: 0, baseMs: 0, factor: 1, maxMs: 0, jitter: false, retryAfterCapMs: 0 },
} as const satisfies Record<string, RetryPolicy>;

export type RetryPolicyName = keyof typeof RETRY_POLICIES;

/**
 * - idempotent: retried on network errors, timeouts, 408, 429 and 5xx but 501.
 * - safe-post: retried only when the request provably did not reach the server (connection
 *   refused, DNS failure, connect timeout) or the server said so with 429 + Retry-After.
 * - never: one attempt.
 */
export type RetryMode = "idempotent" | "never" | "safe-post";

export interface Timeouts {
  readonly connectMs: number;
  /** Whole attempt, from sending to the last body byte. */
  readonly attemptMs: number;
  readonly headersMs: number;
  readonly bodyMs: number;
}

export const DEFAULT_TIMEOUTS: Timeouts = {
  connectMs: 5_000,
  attemptMs: 20_000,
  headersMs: 15_000,
  bodyMs: 15_000,
};

export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE";

export interface CallMetric {
  service: UpstreamService;
  method: HttpMethod;
  /** The route template (e.g. /api/scheduling/v1/users/:userId/events), never a real URL. */
  route: string;
  /** 0 when no response arrived (network error or timeout). */
  status: number;
  ms: number;
  attempt: number;
}

export interface RequestOptions<S extends z.ZodType | undefined = undefined> {
  service: UpstreamService;
  method: HttpMethod;
  url: string;
  /** Route template for metrics and logs; defaults to the URL's path. */
  route?: string | undefined;
  query?: Readonly<Record<string, string | number | boolean | undefined>> | undefined;
  headers?: Readonly<Record<string, string | undefined>> | undefined;
  /** Serialised as JSON. */
  body?: unknown | undefined;
  /** Parses every 2xx body; without one the body is discarded. */
  schema?: S;
  expectStatus: readonly number[];
  /** Default: idempotent for GET/PUT/DELETE, safe-post for POST. */
  retry?: RetryMode | undefined;
  /**
   * Statuses that count as success, but only on a retry: a DELETE whose first attempt was
   * processed and whose answer was lost sees 404 the second time.
   */
  acceptOnRetry?: readonly number[] | undefined;
  /** Lets a client veto a retry on a failed answer (e.g. a relay catalog error that will not pass). */
  shouldRetryResponse?: (status: number, bodyText: string) => boolean | undefined;
  /** Per-status words for the user that suit this operation better than the defaults. */
  userMessages?: Readonly<Partial<Record<number, string>>> | undefined;
  /** Overrides the client's per-attempt deadline (timeouts.attemptMs) for this call. */
  timeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
}

export interface HttpResponse<T> {
  status: number;
  body: T;
  headers: Readonly<Record<string, string | string[] | undefined>>;
}

export interface Http {
  request<S extends z.ZodType>(
    opts: RequestOptions<S> & { schema: S },
  ): Promise<HttpResponse<z.output<S>>>;
  request(opts: RequestOptions<undefined>): Promise<HttpResponse<undefined>>;
  /** Closes the dispatcher if this module created it. */
  close(): Promise<void>;
}

export interface CreateHttpOptions {
  /** Tests and the app pass their own; otherwise one keep-alive Agent is created here. */
  dispatcher?: Dispatcher;
  retryPolicy?: RetryPolicy;
  timeouts?: Partial<Timeouts>;
  logger?: Logger;
  onCall?: (m: CallMetric) => void;
  /** Largest response body read, in bytes. */
  maxBodyBytes?: number;
  /** Injected for tests of jitter; default Math.random. */
  random?: () => number;
}

const MAX_BODY_BYTES = 1_000_000;

/** Errors that prove the request never left this process. */
const NOT_SENT_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT",
]);

export function createAgent(timeouts: Timeouts = DEFAULT_TIMEOUTS): Agent {
  return new Agent({
    connect: { timeout: timeouts.connectMs },
    headersTimeout: timeouts.headersMs,
    bodyTimeout: timeouts.bodyMs,
    keepAliveTimeout: 4_000,
    keepAliveMaxTimeout: 60_000,
    connections: 64,
  });
}

export function createHttp(options: CreateHttpOptions = {}): Http {
  const timeouts: Timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const ownDispatcher = options.dispatcher === undefined;
  const dispatcher = options.dispatcher ?? createAgent(timeouts);
  const policy = options.retryPolicy ?? RETRY_POLICIES.default;
  const maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const random = options.random ?? Math.random;
  const log = options.logger;

  async function request(
    opts: RequestOptions<z.ZodType | undefined>,
  ): Promise<HttpResponse<unknown>> {
    const url = buildUrl(opts.url, opts.query);
    const headers: Record<string, string> = { accept: "application/json" };
    for (const [k, v] of Object.entries(opts.headers ?? {}))
      if (v !== undefined) headers[k.toLowerCase()] = v;
    let payload: string | undefined;
    if (opts.body !== undefined) {
      payload = JSON.stringify(opts.body);
      headers["content-type"] = "application/json";
    }
    const redacted = redactRequest({ method: opts.method, url, headers, body: opts.body });
    const route = opts.route ?? new URL(url).pathname;
    const mode: RetryMode = opts.retry ?? (opts.method === "POST" ? "safe-post" : "idempotent");

    for (let attempt = 1; ; attempt++) {
      const started = performance.now();
      const metric = (status: number) =>
        options.onCall?.({
          service: opts.service,
          method: opts.method,
          route,
          status,
          ms: performance.now() - started,
          attempt,
        });
      const canRetry = attempt <= policy.retries && mode !== "never";

      // undici's own header/body timers tick at about one second; this deadline is exact and
      // also bounds a body that trickles in under the idle body timeout.
      const deadline = AbortSignal.timeout(opts.timeoutMs ?? timeouts.attemptMs);
      const signal = opts.signal ? AbortSignal.any([opts.signal, deadline]) : deadline;
      const timedOut = (phase: TimeoutPhase, err: unknown) =>
        deadline.aborted && !opts.signal?.aborted
          ? new UpstreamTimeoutError({
              service: opts.service,
              request: redacted,
              attempts: attempt,
              phase,
              cause: err,
            })
          : undefined;

      let res: Dispatcher.ResponseData;
      try {
        res = await undiciRequest(url, {
          dispatcher,
          method: opts.method,
          headers,
          headersTimeout: timeouts.headersMs,
          bodyTimeout: timeouts.bodyMs,
          signal,
          ...(payload === undefined ? {} : { body: payload }),
        });
      } catch (err) {
        metric(0);
        const failure =
          timedOut("headers", err) ?? transportError(err, opts.service, redacted, attempt);
        if (!(failure instanceof UpstreamError)) throw failure;
        const retryable =
          canRetry && !opts.signal?.aborted && (mode === "idempotent" || provablyNotSent(failure));
        log?.warn(
          {
            service: opts.service,
            method: opts.method,
            route,
            attempt,
            errorCode: failure.code,
            retry: retryable,
          },
          "upstream call failed without a response",
        );
        if (!retryable) throw failure;
        await sleep(backoff(policy, attempt, random), undefined, { signal: opts.signal });
        continue;
      }

      const status = res.statusCode;
      const resHeaders = res.headers;
      let text: string;
      try {
        text = await readBody(res.body, maxBodyBytes);
      } catch (err) {
        metric(status);
        const failure =
          timedOut("body", err) ?? transportError(err, opts.service, redacted, attempt);
        if (!(failure instanceof UpstreamError)) throw failure;
        const retryable = canRetry && !opts.signal?.aborted && mode === "idempotent";
        log?.warn(
          {
            service: opts.service,
            method: opts.method,
            route,
            status,
            attempt,
            errorCode: failure.code,
            retry: retryable,
          },
          "upstream call failed while reading the response",
        );
        if (!retryable) throw failure;
        await sleep(backoff(policy, attempt, random), undefined, { signal: opts.signal });
        continue;
      }
      metric(status);
      log?.debug(
        { service: opts.service, method: opts.method, route, status, attempt },
        "upstream call",
      );

      const accepted =
        opts.expectStatus.includes(status) ||
        (attempt > 1 && (opts.acceptOnRetry ?? []).includes(status));
      if (accepted) {
        if (status < 200 || status >= 300 || opts.schema === undefined) {
          return { status, body: undefined, headers: resHeaders };
        }
        return {
          status,
          body: parseBody(text, opts.schema, opts.service, redacted, attempt),
          headers: resHeaders,
        };
      }

      const failure = errorFromResponse({
        service: opts.service,
        status,
        bodyText: text,
        request: redacted,
        attempts: attempt,
        userMessages: opts.userMessages,
      });
      const retryAfterMs = parseRetryAfter(headerValue(resHeaders["retry-after"]), Date.now());
      const decision = decideResponseRetry({
        mode,
        status,
        retryAfterMs,
        canRetry,
        policy,
        vetoed: opts.shouldRetryResponse ? !opts.shouldRetryResponse(status, text) : false,
      });
      // A 401 is how an expired cached token shows (the token manager fetches a new one): routine.
      log?.[status === 401 ? "info" : "warn"](
        {
          service: opts.service,
          method: opts.method,
          route,
          status,
          attempt,
          errorCode: failure.code,
          retry: decision.retry,
        },
        "upstream call answered with an error",
      );
      if (!decision.retry) throw failure;
      await sleep(decision.waitMs ?? backoff(policy, attempt, random), undefined, {
        signal: opts.signal,
      });
    }
  }

  return {
    request: request as Http["request"],
    async close() {
      if (ownDispatcher) await dispatcher.close();
    },
  };
}

function buildUrl(base: string, query: RequestOptions["query"]): string {
  const u = new URL(base);
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v !== undefined) u.searchParams.set(k, String(v));
  }
  return u.toString();
}

async function readBody(body: Dispatcher.ResponseData["body"], max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > max) {
      body.destroy();
      throw Object.assign(new Error(`response body larger than ${max} bytes`), {
        code: "ONAIR_BODY_TOO_LARGE",
      });
    }
    chunks.push(b);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** Retry-After as milliseconds from now: delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

export function backoff(
  policy: RetryPolicy,
  attempt: number,
  random: () => number = Math.random,
): number {
  const raw = Math.min(policy.maxMs, policy.baseMs * policy.factor ** (attempt - 1));
  return policy.jitter ? raw / 2 + random() * (raw / 2) : raw;
}

const RETRYABLE_STATUSES = new Set([408, 429, 500, 502, 503, 504]);

export function decideResponseRetry(d: {
  mode: RetryMode;
  status: number;
  retryAfterMs: number | undefined;
  canRetry: boolean;
  policy: RetryPolicy;
  vetoed: boolean;
}): { retry: boolean; waitMs?: number } {
  if (!d.canRetry || d.mode === "never" || d.vetoed) return { retry: false };
  if (d.retryAfterMs !== undefined && d.retryAfterMs > d.policy.retryAfterCapMs)
    return { retry: false };
  if (d.mode === "safe-post") {
    // A 429 with Retry-After is the server saying it did not act on the request.
    if (d.status === 429 && d.retryAfterMs !== undefined)
      return { retry: true, waitMs: d.retryAfterMs };
    return { retry: false };
  }
  if (!RETRYABLE_STATUSES.has(d.status)) return { retry: false };
  return d.retryAfterMs === undefined ? { retry: true } : { retry: true, waitMs: d.retryAfterMs };
}

function provablyNotSent(e: UpstreamError): boolean {
  if (e instanceof UpstreamNetworkError) return e.notSent;
  return e instanceof UpstreamTimeoutError && e.phase === "connect";
}

function transportError(
  err: unknown,
  service: UpstreamService,
  request: RedactedRequest,
  attempts: number,
): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  const c = typeof code === "string" ? code : undefined;
  const phase: TimeoutPhase | undefined =
    c === "UND_ERR_CONNECT_TIMEOUT"
      ? "connect"
      : c === "UND_ERR_HEADERS_TIMEOUT"
        ? "headers"
        : c === "UND_ERR_BODY_TIMEOUT"
          ? "body"
          : undefined;
  if (phase) return new UpstreamTimeoutError({ service, request, attempts, phase, cause: err });
  // An abort is the caller's decision, not an upstream failure: hand it back unchanged.
  if ((err as { name?: unknown } | null)?.name === "AbortError" || c === "UND_ERR_ABORTED")
    return err;
  return new UpstreamNetworkError({
    service,
    request,
    attempts,
    networkCode: c,
    notSent: c !== undefined && NOT_SENT_CODES.has(c),
    cause: err,
  });
}

function parseBody(
  text: string,
  schema: z.ZodType,
  service: UpstreamService,
  request: RedactedRequest,
  attempts: number,
): unknown {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UpstreamSchemaError({
      service,
      request,
      attempts,
      issues: [{ path: "(body)", message: text === "" ? "empty body, expected JSON" : "not JSON" }],
    });
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issues: SchemaIssue[] = parsed.error.issues.map((i) => ({
    path: formatPath(i.path),
    message: i.message,
  }));
  throw new UpstreamSchemaError({ service, request, attempts, issues });
}

export function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return "(body)";
  let out = "";
  for (const p of path) {
    if (typeof p === "number") out += `[${p}]`;
    else out += out === "" ? String(p) : `.${String(p)}`;
  }
  return out;
}
