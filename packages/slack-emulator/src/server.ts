// Longer than the project's ~400 lines: the HTTP edge (Web API, OAuth authorize, response_url,
// the read API) and the SlackEmulator object that tests drive are one interface; the rules
// live in dispatch.ts, methods/ and workspace.ts, the staged faults in faults.ts, the call log in
// call-log.ts, Slack's rate limits in ratelimit.ts, reading requests in http.ts.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { CallLog, type CallRecord, recordedArgs, redact } from "./call-log.ts";
import { dispatch, EmulatorBug } from "./dispatch.ts";
import { createSlackDriver, type SlackDriver, type SlackDriverOptions } from "./driver/index.ts";
import { SlackApiError } from "./errors.ts";
import { FaultRules, type SlowRule, type ThrottleRule } from "./faults.ts";
import {
  BodyTooLarge,
  basicAuth,
  formToObject,
  readApiRequest,
  readBody,
  readBytes,
  sendJson,
  uploadedBytes,
} from "./http.ts";
import type { Notification } from "./mentions.ts";
import { fileJson, fileState, receiveUpload, sharesLanded } from "./methods/files.ts";
import { authorize } from "./oauth.ts";
import { type RateLimit, RateLimiter, type RateLimits } from "./ratelimit.ts";
import { methodFacts } from "./reference/index.ts";
import type { WorkspaceSeed } from "./seed.ts";
import { snapshot } from "./snapshot.ts";
import { type Json, type Message, Workspace } from "./workspace.ts";

/**
 * The emulated Slack over real HTTP (node:http): the Web API under /api/, the OAuth
 * authorize page, response_url endpoints, and a small read API for the playground page.
 * Answers as Slack does: HTTP 200 with {ok:true,…} or {ok:false,error}, 429 with
 * Retry-After when throttled.
 */

export type { CallRecord } from "./call-log.ts";
export type { SlowRule, ThrottleRule } from "./faults.ts";

export interface SlackEmulatorOptions {
  /** 0 (default): any free port */
  readonly port?: number;
  /** default 127.0.0.1 */
  readonly host?: string;
  /** the app's signing secret; the driver signs with it */
  readonly signingSecret: string;
  /** where the app listens (its /slack/events, /slack/oauth_redirect live under it) */
  readonly appUrl?: string;
  /** ms since the epoch; default Date.now. Triggers, ts, schedules, expiries follow it. */
  readonly now?: () => number;
  readonly seed?: WorkspaceSeed;
  /** issue expiring tokens with refresh tokens from oauth.v2.access (token rotation) */
  readonly tokenRotation?: { readonly expiresInSec: number };
  /**
   * Slack's rate limits (ratelimit.ts): per-method tiers and the per-channel message rate are on
   * by default, the non-Marketplace history limits off; false turns every limit off.
   */
  readonly rateLimits?: RateLimits | false;
  /** the per-channel message rate alone (as rateLimits.perChannel); kept for older callers */
  readonly rateLimit?: RateLimit;
  /** the driver's timing (ack deadline, Events API redelivery schedule) */
  readonly driver?: Pick<
    SlackDriverOptions,
    "ackDeadlineMs" | "redeliveryScheduleMs" | "timeoutMs"
  >;
  /** post due scheduled messages on a timer; off unless given (releaseDue() does it by hand) */
  readonly releaseScheduledEveryMs?: number;
  /** largest request body accepted, bytes; default 1 MiB */
  readonly bodyLimit?: number;
  /**
   * ms between files.completeUploadExternal's answer and its share appearing (Slack shares
   * asynchronously); default DEFAULT_FILE_SHARE_DELAY_MS, 0 shares before answering
   */
  readonly fileShareDelayMs?: number;
}

export interface SlackEmulator {
  readonly origin: string;
  /** `${origin}/api/`: the value for SLACK_API_URL and WebClient's slackApiUrl */
  readonly apiUrl: string;
  /** `${origin}/oauth/v2/authorize`: the value for InstallProvider's authorizationUrl */
  readonly authorizeUrl: string;
  readonly workspace: Workspace;
  /** every call received, in order */
  readonly calls: readonly CallRecord[];
  /** the pre-installed bot token (what SLACK_BOT_TOKEN would hold) */
  readonly botToken: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly signingSecret: string;
  readonly appUrl: string | undefined;
  /** sends signed requests to the app; throws until appUrl is set */
  readonly driver: SlackDriver;
  setAppUrl(url: string): void;
  /** who each message would notify, in order (mentions.ts) */
  readonly notifications: readonly Notification[];
  /** the next `times` matching calls get HTTP 429 with Retry-After */
  throttle(rule: ThrottleRule): void;
  clearThrottles(): void;
  /**
   * the next `times` matching calls take effect at once and are answered `ms` later (with
   * `error`: answered that error, as Slack may after a call that partly or wholly happened; with
   * `takesEffect: "late"`, they take effect `ms` later); resolves when the first of them arrives,
   * before it is held or answered
   */
  slow(rule: SlowRule): Promise<void>;
  /** the per-channel message rate; undefined turns it off */
  setRateLimit(limit: RateLimit | undefined): void;
  /** replaces the parts of the rate limits given (false: every limit off); buckets refill */
  setRateLimits(limits: RateLimits | false): void;
  readonly rateLimits: Required<Omit<RateLimits, "workspaceOf">>;
  setTokenRotation(rotation: { expiresInSec: number } | undefined): void;
  /** posts every scheduled message whose post_at has come (emulator clock) */
  releaseDue(): Message[];
  /** resolves once every file share answered so far has landed (fileShareDelayMs) */
  sharesLanded(): Promise<void>;
  /** resolves with the first call (with seq > since) matching, or rejects after timeoutMs */
  waitForCall(
    match: (call: CallRecord) => boolean,
    opts?: { since?: number; timeoutMs?: number },
  ): Promise<CallRecord>;
  /** a listener for every call as it is recorded; returns the unsubscribe */
  onCall(listener: (call: CallRecord) => void): () => void;
  clearCalls(): void;
  close(): Promise<void>;
}

export async function startSlackEmulator(opts: SlackEmulatorOptions): Promise<SlackEmulator> {
  const host = opts.host ?? "127.0.0.1";
  const now = opts.now ?? Date.now;
  const bodyLimit = opts.bodyLimit ?? 1024 * 1024;
  const workspace = new Workspace(opts.seed, { now });
  workspace.tokenRotation = opts.tokenRotation;
  if (opts.fileShareDelayMs !== undefined) workspace.fileShareDelayMs = opts.fileShareDelayMs;
  const log = new CallLog(now);
  const record = (c: Omit<CallRecord, "seq" | "time">) => log.record(c);
  const calls = log.calls;
  const faults = new FaultRules((ref) => workspace.resolveChannel(ref)?.id);
  const limiter = new RateLimiter(now, opts.rateLimits ?? {});
  if (opts.rateLimit !== undefined) limiter.set({ perChannel: opts.rateLimit });
  let appUrl = opts.appUrl?.replace(/\/+$/, "");
  let driver: SlackDriver | undefined;

  /** A throttle rule this call meets, else Slack's own rate limits. */
  function throttled(method: string, args: Json): number | { error: string } | undefined {
    const staged = faults.throttled(method, args);
    if (staged !== undefined) return staged;
    const channel = typeof args.channel === "string" ? args.channel : undefined;
    return limiter.take(
      method,
      channel === undefined ? undefined : workspace.resolveChannel(channel)?.id,
    );
  }

  async function handleApi(req: IncomingMessage, res: ServerResponse, method: string, url: URL) {
    const { raw, token, parseError } = await readApiRequest(req, url, bodyLimit);
    const known = token === undefined ? undefined : workspace.tokens.get(token);
    const base = {
      method,
      args: recordedArgs(raw),
      ...(known && { tokenKind: known.kind }),
    };

    if (parseError === undefined && methodFacts(method) !== undefined) {
      const retryAfter = throttled(method, raw);
      if (typeof retryAfter === "object") {
        record({ ...base, ok: false, error: retryAfter.error, status: 200 });
        sendJson(res, 200, { ok: false, error: retryAfter.error });
        return;
      }
      if (retryAfter !== undefined) {
        record({ ...base, ok: false, error: "ratelimited", status: 429 });
        sendJson(
          res,
          429,
          { ok: false, error: "ratelimited" },
          { "retry-after": String(retryAfter) },
        );
        return;
      }
    }

    if (parseError !== undefined) {
      const out = { ok: false, error: parseError };
      record({ ...base, ok: false, error: parseError, status: 200, response: out });
      sendJson(res, 200, out);
      return;
    }
    const late = faults.lateBy(method, raw);
    // Slow on the way in: nothing of the call is seen (history, the call log) until it lands.
    if (late?.takesEffect === "late" && late.ms > 0) {
      await new Promise((resolve) => setTimeout(resolve, late.ms));
    }
    let r: ReturnType<typeof dispatch>;
    try {
      r = dispatch(workspace, {
        method,
        raw,
        token,
        basic: basicAuth(req.headers.authorization),
        historyPageMax: limiter.historyPageMax(method),
      });
    } catch (err) {
      // A handler answered an error it does not declare: the emulator's bug, shown loudly.
      if (err instanceof EmulatorBug) {
        record({ ...base, ok: false, error: "emulator_bug", status: 500, warnings: [err.message] });
      }
      throw err;
    }
    // Took effect, answered with an error that says it may have: the answer the app gets.
    const body =
      late?.error !== undefined && r.body.ok === true ? { ok: false, error: late.error } : r.body;
    const ok = body.ok === true;
    const warnings = body === r.body ? r.warnings : [...r.warnings, "took_effect"];
    record({
      ...base,
      ok,
      ...(!ok && { error: String(body.error) }),
      status: 200,
      response: redact(body) as Json,
      ...(r.unknownArguments.length > 0 && { unknown_arguments: r.unknownArguments }),
      ...(warnings.length > 0 && { warnings }),
    });
    if (late && late.ms > 0 && late.takesEffect !== "late") {
      await new Promise((resolve) => setTimeout(resolve, late.ms));
    }
    sendJson(res, 200, body, r.headers);
  }

  function handleAuthorize(res: ServerResponse, url: URL) {
    const q = url.searchParams;
    const state = q.get("state") ?? undefined;
    const redirectUri =
      q.get("redirect_uri") ??
      (appUrl === undefined ? undefined : `${appUrl}/slack/oauth_redirect`);
    const args = redact(Object.fromEntries(q.entries())) as Json;
    const fail = (error: string, status = 400) => {
      record({ method: "oauth.v2.authorize", args, ok: false, error, status });
      res.writeHead(status, { "content-type": "text/plain; charset=utf-8" }).end(`${error}\n`);
    };
    if (redirectUri === undefined) return fail("bad_redirect_uri");
    let target: URL;
    try {
      target = new URL(redirectUri);
    } catch {
      return fail("bad_redirect_uri");
    }
    if (q.get("deny") === "1") {
      // The person clicked Cancel: Slack sends them back with error=access_denied.
      target.searchParams.set("error", "access_denied");
    } else {
      try {
        const code = authorize(workspace, {
          clientId: q.get("client_id") ?? undefined,
          scopes: (q.get("scope") ?? "")
            .split(",")
            .map((s) => s.trim())
            .filter(Boolean),
          userScopes: (q.get("user_scope") ?? "")
            .split(",")
            .map((s) => s.trim())
            .filter(Boolean),
          redirectUri: q.get("redirect_uri") ?? undefined,
          user: q.get("user") ?? undefined,
        });
        target.searchParams.set("code", code);
      } catch (err) {
        if (err instanceof SlackApiError) return fail(err.code);
        throw err;
      }
    }
    if (state !== undefined) target.searchParams.set("state", state);
    record({ method: "oauth.v2.authorize", args, ok: true, status: 302 });
    res.writeHead(302, { location: target.toString() }).end();
  }

  async function handleResponseUrl(req: IncomingMessage, res: ServerResponse, id: string) {
    const text = await readBody(req, bodyLimit);
    let body: Json = {};
    try {
      const ct = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
      const parsed: unknown =
        ct === "application/x-www-form-urlencoded"
          ? JSON.parse(String(formToObject(text).payload ?? "{}"))
          : JSON.parse(text);
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed))
        body = parsed as Json;
      else throw new Error("not an object");
    } catch {
      record({
        method: "response_url",
        args: { id },
        ok: false,
        error: "invalid_payload",
        status: 400,
      });
      sendJson(res, 400, { ok: false, error: "invalid_payload" });
      return;
    }
    const args = { ...recordedArgs(body), id };
    try {
      workspace.respond(id, body);
      record({ method: "response_url", args, ok: true, status: 200 });
      sendJson(res, 200, { ok: true });
    } catch (err) {
      if (!(err instanceof SlackApiError)) throw err;
      const status = err.code === "expired_url" || err.code === "used_url" ? 404 : 400;
      const out = { ok: false, error: err.code, ...err.extra };
      record({ method: "response_url", args, ok: false, error: err.code, status, response: out });
      sendJson(res, status, out);
    }
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://emulator");
    const path = url.pathname;
    const run = async () => {
      if (path.startsWith("/api/") && (req.method === "POST" || req.method === "GET")) {
        return handleApi(req, res, decodeURIComponent(path.slice(5)), url);
      }
      if (path === "/oauth/v2/authorize" && req.method === "GET") return handleAuthorize(res, url);
      if (path.startsWith("/upload/v1/") && req.method === "POST") {
        // Slack's upload URL: the bytes of a file files.getUploadURLExternal announced.
        const id = decodeURIComponent(path.slice("/upload/v1/".length));
        const bytes = uploadedBytes(
          await readBytes(req, 50 * bodyLimit),
          req.headers["content-type"],
        );
        const ok = receiveUpload(workspace, id, bytes);
        record({
          method: "upload",
          args: { file_id: id, bytes: bytes.length },
          ok,
          status: ok ? 200 : 404,
        });
        res.writeHead(ok ? 200 : 404, { "content-type": "text/plain" });
        res.end(ok ? `OK - ${bytes.length}` : "Not Found");
        return;
      }
      const file = /^\/files\/([^/]+)\//.exec(path);
      if (file && req.method === "GET") {
        const f = fileState(workspace).files.get(decodeURIComponent(file[1] ?? ""));
        if (!f?.bytes) return sendJson(res, 404, { ok: false, error: "file_not_found" });
        res.writeHead(200, { "content-type": String(fileJson(workspace, f).mimetype) });
        res.end(f.bytes);
        return;
      }
      if (path.startsWith("/response/") && req.method === "POST") {
        return handleResponseUrl(req, res, path.slice("/response/".length));
      }
      if (path === "/_emulator/state" && req.method === "GET") {
        return sendJson(res, 200, snapshot(workspace));
      }
      if (path === "/_emulator/calls" && req.method === "GET") {
        const since = Number(url.searchParams.get("since") ?? 0);
        return sendJson(res, 200, { calls: calls.filter((c) => c.seq > since) });
      }
      sendJson(res, 404, { ok: false, error: "not_found" });
    };
    run().catch((err: unknown) => {
      if (err instanceof BodyTooLarge) {
        if (!res.headersSent) sendJson(res, 413, { ok: false, error: "request_too_large" });
        return;
      }
      if (!res.headersSent) sendJson(res, 500, { ok: false, error: "fatal_error" });
      else res.destroy();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const hostPart = addr.family === "IPv6" ? `[${addr.address}]` : addr.address;
  const origin = `http://${hostPart}:${addr.port}`;
  workspace.origin = origin;

  const timer =
    opts.releaseScheduledEveryMs === undefined
      ? undefined
      : setInterval(() => workspace.releaseDue(), opts.releaseScheduledEveryMs);
  timer?.unref();

  const emulator: SlackEmulator = {
    origin,
    apiUrl: `${origin}/api/`,
    authorizeUrl: `${origin}/oauth/v2/authorize`,
    workspace,
    calls,
    get botToken() {
      return workspace.botToken;
    },
    clientId: workspace.app.clientId,
    clientSecret: workspace.app.clientSecret,
    signingSecret: opts.signingSecret,
    get appUrl() {
      return appUrl;
    },
    get driver(): SlackDriver {
      if (appUrl === undefined) {
        throw new Error("the emulator has no appUrl yet: call setAppUrl(url) first");
      }
      driver ??= createSlackDriver({
        ...opts.driver,
        appUrl,
        signingSecret: opts.signingSecret,
        emulator,
      });
      return driver;
    },
    setAppUrl(url: string) {
      appUrl = url.replace(/\/+$/, "");
      driver = undefined;
    },
    throttle: (rule) => faults.throttle(rule),
    clearThrottles: () => faults.clearThrottles(),
    slow: (rule) => faults.slow(rule),
    get notifications() {
      return workspace.notifications;
    },
    setRateLimit(limit: RateLimit | undefined) {
      limiter.set({ perChannel: limit ?? false });
    },
    setRateLimits(limits: RateLimits | false) {
      limiter.set(limits);
    },
    get rateLimits() {
      return limiter.config;
    },
    setTokenRotation(rotation) {
      workspace.tokenRotation = rotation;
    },
    releaseDue: () => workspace.releaseDue(),
    sharesLanded: () => sharesLanded(workspace),
    waitForCall: (match, o) => log.waitForCall(match, o),
    onCall: (listener) => log.onCall(listener),
    clearCalls: () => log.clear(),
    async close() {
      if (timer) clearInterval(timer);
      driver?.cancelRedeliveries();
      log.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
  return emulator;
}
