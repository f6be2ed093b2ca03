import { Agent, request } from "undici";
import { type SandboxServer, startSandboxServer } from "../../src/sandbox/index.ts";
import { type CallMetric, createHttp, type Http, RETRY_POLICIES } from "../../src/upstream/http.ts";
import { createSecretScanner, type SecretScanner } from "../helpers/secrets.ts";

/**
 * Shared by the upstream contract suites: a sandbox on port 0, one dispatcher, an Http with the
 * fast retry policy whose logs go to a secret scanner, and the sandbox's HTTP control API.
 */
export interface UpstreamHarness {
  sandbox: SandboxServer;
  scanner: SecretScanner;
  http: Http;
  /** An Http that never retries, to see single answers. */
  httpNoRetry: Http;
  calls: CallMetric[];
  addFault(fault: {
    service: "relay" | "events";
    error?: string;
    status?: number;
    delayMs?: number;
    times?: number;
  }): Promise<void>;
  clearFaults(): Promise<void>;
  log(): Promise<SandboxLogEntry[]>;
  clearLog(): Promise<void>;
  /** Awaits the promise, expects a rejection, records the error with the scanner. */
  failure(p: Promise<unknown>, where?: string): Promise<unknown>;
  close(): Promise<void>;
}

export interface SandboxLogEntry {
  seq: number;
  service: "relay" | "events";
  method: string;
  path: string;
  query?: Record<string, string | string[]>;
  body?: unknown;
  status: number;
  grantType?: string;
  reason?: string;
}

export async function startUpstreamHarness(): Promise<UpstreamHarness> {
  const scanner = createSecretScanner();
  const sandbox = await startSandboxServer({ logger: scanner.logger });
  const dispatcher = new Agent({ connections: 256 });
  const calls: CallMetric[] = [];
  const common = {
    dispatcher,
    logger: scanner.logger,
    timeouts: { attemptMs: 5_000 },
    onCall: (m: CallMetric) => calls.push(m),
  };
  const http = createHttp({ ...common, retryPolicy: RETRY_POLICIES.fast });
  const httpNoRetry = createHttp({ ...common, retryPolicy: RETRY_POLICIES.none });

  async function control(method: "GET" | "POST" | "DELETE", path: string, body?: unknown) {
    const res = await request(`${sandbox.origin}/_sandbox/control${path}`, {
      dispatcher,
      method,
      headers: { "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = (await res.body.json()) as Record<string, unknown>;
    if (res.statusCode !== 200)
      throw new Error(`control ${method} ${path}: ${JSON.stringify(json)}`);
    return json;
  }

  let n = 0;
  return {
    sandbox,
    scanner,
    http,
    httpNoRetry,
    calls,
    async addFault(fault) {
      await control("POST", "/faults", fault);
    },
    async clearFaults() {
      await control("DELETE", "/faults");
    },
    async log() {
      return (await control("GET", "/log"))["entries"] as SandboxLogEntry[];
    },
    async clearLog() {
      await control("DELETE", "/log");
    },
    async failure(p, where) {
      try {
        await p;
      } catch (err) {
        scanner.addError(where ?? `failure #${++n}`, err);
        return err;
      }
      throw new Error("expected the call to fail, and it succeeded");
    },
    async close() {
      await sandbox.close();
      await dispatcher.close();
    },
  };
}
