import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import type { Dispatcher } from "undici";
import type { Logger } from "../log.ts";
import { redactBody } from "../log.ts";
import { CallLog, redactQuery, type SandboxService } from "./calllog.ts";
import { createControl, handleControl, type SandboxControl } from "./control.ts";
import { Deliverer } from "./deliver.ts";
import { EventsService, TOKEN_PATH } from "./events.ts";
import { FaultQueue, faultReply } from "./faults.ts";
import {
  BodyTooLargeError,
  isPlainObject,
  parseJson,
  type Reply,
  readBody,
  type ServiceCall,
  writeReply,
} from "./http.ts";
import { persistSandbox } from "./persist.ts";
import { createRelayService } from "./relay.ts";

export type { CallLogEntry, SandboxService } from "./calllog.ts";
export type {
  AttendeeJoin,
  AttendeeRecord,
  AttendeesRequest,
  AttendeesResult,
  FaultInfo,
  SandboxControl,
  StateRequest,
  StateResult,
} from "./control.ts";
export { DEFAULT_DELIVERY_CONCURRENCY } from "./control.ts";
export type { DeliveryResult } from "./deliver.ts";
export { SandboxControlError } from "./errors.ts";
export type { EventState } from "./events-records.ts";
export type { WebhookType } from "./events-schemas.ts";
export type { FaultRequest } from "./faults.ts";
export { relayErrorBody } from "./faults.ts";
export { SANDBOX_ENTERPRISE_ID, SANDBOX_SEEDS } from "./seeds.ts";

export interface SandboxOptions {
  /** Clock, default Date.now: token expiry, creation dates, join times. */
  now?: () => number;
  /** Used for webhook deliveries; default an agent the sandbox owns. */
  dispatcher?: Dispatcher;
  /** Each call is logged at debug, credentials redacted. Default: none. */
  logger?: Logger;
  /** Per-delivery timeout; default 10 s. */
  deliveryTimeoutMs?: number;
  /** Keep the events service's users and events in this file across restarts (persist.ts). */
  stateFile?: string;
}

export interface Sandbox {
  /**
   * Serves any request whose path starts with /_sandbox/ (relay, events, control); returns false
   * without touching res for any other path, so an app can mount it in its own server.
   */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  /** The same operations as the HTTP control API, in process. */
  readonly control: SandboxControl;
  close(): Promise<void>;
}

const PREFIX = "/_sandbox/";
const SERVICE_BODY_LIMIT = 1024 * 1024;
/** Explicit joins for a 20,000-attendee burst come to a few MB. */
const CONTROL_BODY_LIMIT = 32 * 1024 * 1024;

/** `/_sandbox/relay/api/x` → ["relay", "/api/x"]; undefined when no service matches. */
function splitService(path: string): [SandboxService | "control", string] | undefined {
  for (const name of ["relay", "events", "control"] as const) {
    const base = `${PREFIX}${name}`;
    if (path === base) return [name, "/"];
    if (path.startsWith(`${base}/`)) return [name, path.slice(base.length)];
  }
  return undefined;
}

export function createSandbox(options: SandboxOptions = {}): Sandbox {
  const now = options.now ?? Date.now;
  const logger = options.logger;
  const log = new CallLog();
  const faults = new FaultQueue();
  const events = new EventsService({ now });
  const saved = options.stateFile
    ? persistSandbox(events, options.stateFile, {
        onError: (err) => logger?.warn({ err }, "sandbox: its saved events could not be kept"),
      })
    : undefined;
  const relay = createRelayService({
    now,
    isLiveEventsToken: (t) => events.liveToken(t) !== undefined,
  });
  const deliverer = new Deliverer({
    dispatcher: options.dispatcher,
    ...(options.deliveryTimeoutMs === undefined ? {} : { timeoutMs: options.deliveryTimeoutMs }),
  });
  const control = createControl({ now, events, deliverer, faults, log });
  const closing = new AbortController();

  async function serveService(
    service: SandboxService,
    call: ServiceCall,
    res: ServerResponse,
  ): Promise<void> {
    const fault = faults.take(service);
    if (fault !== undefined && fault.delayMs > 0) {
      await sleep(fault.delayMs, undefined, { signal: closing.signal });
    }
    let reply = fault === undefined ? undefined : faultReply(fault);
    if (reply === undefined) {
      reply = service === "relay" ? relay(call) : events.handle(call);
      if (service === "events" && call.method !== "GET") saved?.touch();
    }
    record(service, call, reply);
    writeReply(res, reply);
  }

  function record(service: SandboxService, call: ServiceCall, reply: Reply): void {
    let body: unknown;
    let grantType: string | undefined;
    if (call.rawBody.length > 0) {
      const parsed = parseJson(call.rawBody);
      // Unparseable text is not echoed: it may hold a credential in a shape scrub cannot see.
      body = parsed === undefined ? "[not JSON]" : redactBody(parsed);
      if (service === "events" && call.path === TOKEN_PATH && isPlainObject(parsed)) {
        if (typeof parsed.grant_type === "string") grantType = parsed.grant_type;
      }
    }
    const full = log.add({
      at: now(),
      service,
      method: call.method,
      path: call.path,
      ...(call.query.size > 0 ? { query: redactQuery(call.query) } : {}),
      ...(body === undefined ? {} : { body }),
      status: reply.status,
      ...(grantType === undefined ? {} : { grantType }),
      ...(reply.reason === undefined ? {} : { reason: reply.reason }),
    });
    logger?.debug({ sandbox: full }, "sandbox call");
  }

  async function serve(req: IncomingMessage, res: ServerResponse, rawUrl: string): Promise<void> {
    const q = rawUrl.indexOf("?");
    const path = q < 0 ? rawUrl : rawUrl.slice(0, q);
    const query = new URLSearchParams(q < 0 ? "" : rawUrl.slice(q + 1));
    const method = req.method ?? "GET";
    const target = splitService(path);
    if (target === undefined) {
      writeReply(res, {
        status: 404,
        json: {
          error: "no sandbox here: use /_sandbox/relay, /_sandbox/events or /_sandbox/control",
        },
      });
      return;
    }
    const [service, subPath] = target;
    let rawBody: Buffer;
    try {
      rawBody = await readBody(
        req,
        service === "control" ? CONTROL_BODY_LIMIT : SERVICE_BODY_LIMIT,
      );
    } catch (err) {
      if (!(err instanceof BodyTooLargeError)) throw err;
      writeReply(res, { status: 413, headers: { connection: "close" } });
      return;
    }
    if (closing.signal.aborted) {
      writeReply(res, { status: 503 });
      return;
    }
    if (service === "control") {
      writeReply(res, await handleControl(control, method, subPath, rawBody));
      // A state or attendees change: who is present is part of what is kept.
      if (method !== "GET") saved?.touch();
      return;
    }
    await serveService(
      service,
      { method, path: subPath, query, headers: req.headers, rawBody },
      res,
    );
  }

  return {
    handle(req, res) {
      const rawUrl = req.url ?? "/";
      if (!rawUrl.startsWith(PREFIX)) return false;
      serve(req, res, rawUrl).catch((err: unknown) => {
        if (closing.signal.aborted) {
          if (!res.headersSent) writeReply(res, { status: 503 });
          return;
        }
        logger?.error({ err }, "sandbox: request failed");
        if (!res.headersSent) writeReply(res, { status: 500, json: { error: "sandbox failure" } });
        else res.destroy();
      });
      return true;
    },
    control,
    async close() {
      closing.abort();
      saved?.flush();
      await deliverer.close();
    },
  };
}

export interface SandboxServer {
  /** e.g. http://127.0.0.1:41234 */
  origin: string;
  /** `${origin}/_sandbox/relay` */
  relayBaseUrl: string;
  /** `${origin}/_sandbox/events` */
  eventsBaseUrl: string;
  sandbox: Sandbox;
  close(): Promise<void>;
}

/** Serves the sandbox alone (tests, `npm run sandbox`). Default 127.0.0.1, port 0 (any free). */
export async function startSandboxServer(
  options: SandboxOptions & { port?: number; host?: string } = {},
): Promise<SandboxServer> {
  const { port = 0, host = "127.0.0.1", ...sandboxOptions } = options;
  const sandbox = createSandbox(sandboxOptions);
  const server = createServer((req, res) => {
    if (!sandbox.handle(req, res)) {
      writeReply(res, { status: 404, json: { error: "not found: the sandbox serves /_sandbox/" } });
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  // A wildcard bind is reachable locally; a URL cannot name 0.0.0.0 usefully.
  const shown =
    address.address === "0.0.0.0" || address.address === "::"
      ? "localhost"
      : address.family === "IPv6"
        ? `[${address.address}]`
        : address.address;
  const origin = `http://${shown}:${address.port}`;
  return {
    origin,
    relayBaseUrl: `${origin}/_sandbox/relay`,
    eventsBaseUrl: `${origin}/_sandbox/events`,
    sandbox,
    async close() {
      await sandbox.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
