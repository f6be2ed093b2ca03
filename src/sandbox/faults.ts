import { REDACTED } from "../log.ts";
import {
  isRelayErrorName,
  RELAY_ERROR_CATALOG,
  RELAY_ERROR_NAMES,
  type RelayErrorName,
} from "../upstream/relay/catalog.ts";
import type { SandboxService } from "./calllog.ts";
import { SandboxControlError as ControlError } from "./errors.ts";
import { isPlainObject, type Reply } from "./http.ts";

/** `POST /_sandbox/control/faults`: the next `times` calls to `service` are delayed and/or fail. */
export interface FaultRequest {
  service: SandboxService;
  /** Relay only: a catalog errorName; the call fails with that error's status and full body. */
  error?: RelayErrorName;
  /** The status to answer with (overrides the catalog's when both are given). */
  status?: number;
  delayMs?: number;
  times?: number;
}

export interface Fault {
  readonly service: SandboxService;
  readonly error: RelayErrorName | undefined;
  readonly status: number | undefined;
  readonly delayMs: number;
  /** Calls still to be affected. */
  remaining: number;
}

const MAX_DELAY_MS = 120_000;
const MAX_TIMES = 1_000_000;

function integerIn(v: unknown, name: string, min: number, max: number): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) {
    throw new ControlError(400, `${name} must be an integer from ${min} to ${max}`);
  }
  return v;
}

export function parseFault(input: unknown): Fault {
  if (!isPlainObject(input)) throw new ControlError(400, "a fault is a JSON object");
  for (const key of Object.keys(input)) {
    if (!["service", "error", "status", "delayMs", "times"].includes(key)) {
      throw new ControlError(400, `unknown fault field "${key}"`);
    }
  }
  const { service, error, status, delayMs, times } = input;
  if (service !== "relay" && service !== "events") {
    throw new ControlError(400, 'service must be "relay" or "events"');
  }
  if (error !== undefined) {
    if (service === "events") {
      throw new ControlError(
        400,
        "the events service has no named errors (its errors carry no body): give a status",
      );
    }
    if (!isRelayErrorName(error)) {
      throw new ControlError(400, `unknown relay error "${String(error)}": not in the catalog`);
    }
  }
  const fault: Fault = {
    service,
    error: error === undefined ? undefined : (error as RelayErrorName),
    status: status === undefined ? undefined : integerIn(status, "status", 400, 599),
    delayMs: delayMs === undefined ? 0 : integerIn(delayMs, "delayMs", 0, MAX_DELAY_MS),
    remaining: times === undefined ? 1 : integerIn(times, "times", 1, MAX_TIMES),
  };
  if (fault.error === undefined && fault.status === undefined && fault.delayMs === 0) {
    throw new ControlError(400, "a fault needs an error, a status or a delayMs");
  }
  return fault;
}

/** Pending faults per service, consumed first in, first out, one unit per call. */
export class FaultQueue {
  private faults: Fault[] = [];

  add(fault: Fault): void {
    this.faults.push(fault);
  }

  /** The fault that applies to the next call of `service`, if any, consuming one unit. */
  take(service: SandboxService): Fault | undefined {
    const index = this.faults.findIndex((f) => f.service === service);
    if (index < 0) return undefined;
    const fault = this.faults[index]!;
    fault.remaining -= 1;
    if (fault.remaining <= 0) this.faults.splice(index, 1);
    return fault;
  }

  list(): Fault[] {
    return this.faults.map((f) => ({ ...f }));
  }

  clear(): void {
    this.faults = [];
  }
}

/** Plausible values for every errorDetails key in the catalog, so clients see a real-looking body. */
const SAMPLE_DETAILS: Readonly<Record<string, unknown>> = {
  causes: ["Connection reset by peer"],
  remoteResponse: "HTTP/1.1 401 Unauthorized",
  listenerServiceId: "ls-sandbox-01",
  remoteAddress: "198.51.100.23",
  remoteRequest: `POST /putxml HTTP/1.1 Authorization: Basic ${REDACTED}`,
  command: "Dial",
  remoteId: "ep-0042",
  remoteName: "Boardroom 4",
  commandName: "Dial",
  calendarId: "cal-sandbox-01",
  endpointName: "Boardroom 4",
  listenerServiceVersion: "1.4.2",
  pathReference: 'AccessToken["roles"]',
  entityClass: "Endpoint",
  entityId: "ep-0042",
  action: "START_RECORDING",
  meetingId: "5551234567",
  meetingResponseCode: 403,
};

export interface RelayErrorBody {
  errorCode: number;
  errorName: string;
  errorMessage: string;
  errorDetails: Record<string, unknown> | null;
}

/**
 * The body the relay sends for a catalog error. `details` fills keys the caller knows (the real
 * message of a validation error, say); the rest get samples. Keys are exactly the catalog's.
 */
export function relayErrorBody(
  name: RelayErrorName,
  errorMessage: string = RELAY_ERROR_CATALOG[name].meaning,
  details: Readonly<Record<string, unknown>> = {},
): RelayErrorBody {
  const entry = RELAY_ERROR_CATALOG[name];
  let errorDetails: Record<string, unknown> | null = null;
  if (entry.detailsKeys !== null) {
    errorDetails = {};
    for (const key of entry.detailsKeys) {
      if (Object.hasOwn(details, key)) errorDetails[key] = details[key];
      else if (key === "errorMessage" || key === "message") errorDetails[key] = errorMessage;
      else if (key === "errorCode") errorDetails[key] = entry.errorCode;
      else if (key === "cause") errorDetails[key] = null;
      else errorDetails[key] = SAMPLE_DETAILS[key] ?? null;
    }
  }
  return { errorCode: entry.errorCode, errorName: name, errorMessage, errorDetails };
}

export function relayErrorReply(
  name: RelayErrorName,
  errorMessage?: string,
  details?: Readonly<Record<string, unknown>>,
): Reply {
  return {
    status: RELAY_ERROR_CATALOG[name].status,
    json: relayErrorBody(name, errorMessage, details),
  };
}

/** The reply an injected fault produces (after its delay), or undefined for a delay-only fault. */
export function faultReply(fault: Fault): Reply | undefined {
  if (fault.service === "events") {
    return fault.status === undefined ? undefined : { status: fault.status };
  }
  if (fault.error !== undefined) {
    const body = relayErrorBody(fault.error);
    return { status: fault.status ?? RELAY_ERROR_CATALOG[fault.error].status, json: body };
  }
  if (fault.status === undefined) return undefined;
  const status = fault.status;
  const name = RELAY_ERROR_NAMES.find((n) => RELAY_ERROR_CATALOG[n].status === status);
  if (name !== undefined) return { status, json: relayErrorBody(name) };
  // No catalog error has this status: the relay's generic shape, with nothing invented in it.
  return {
    status,
    json: {
      errorCode: status,
      errorName: "HttpError",
      errorMessage: `HTTP ${status}`,
      errorDetails: null,
    } satisfies RelayErrorBody,
  };
}
