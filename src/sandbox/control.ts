import { randomUUID } from "node:crypto";
import type { CallLog, CallLogEntry } from "./calllog.ts";
import type { Deliverer, DeliveryResult } from "./deliver.ts";
import { SandboxControlError } from "./errors.ts";
import type { EventsService } from "./events.ts";
import {
  EVENT_STATES,
  type EventState,
  type LiveAttendee,
  type StoredEvent,
} from "./events-records.ts";
import { type Fault, type FaultQueue, type FaultRequest, parseFault } from "./faults.ts";
import { isPlainObject, parseJson, type Reply } from "./http.ts";

export interface StateRequest {
  state: EventState;
  /** A new id starts a new instance (attendance starts from zero); default: the current one. */
  instanceId?: string;
}

export interface StateResult {
  eventId: string;
  instanceId: string;
  state: EventState;
  /** One per EVENT_STATE configuration (none when the event has none registered). */
  deliveries: DeliveryResult[];
}

export interface AttendeeJoin {
  name: string;
  email?: string;
  /** Default "browser". */
  endpointType?: string;
}

export interface AttendeesRequest {
  join?: AttendeeJoin[];
  /** endpointGuids of present attendees of the current instance. */
  leave?: string[];
  /** Synthetic joins added after `join`: "Attendee N", attendee-N@example.com. */
  count?: number;
  /** Deliveries in flight at once; default 16, 1 keeps the order exactly. */
  concurrency?: number;
  /** When these joins and leaves happen (epoch ms), to simulate minutes; default now. */
  at?: number;
}

export interface AttendeeRecord extends LiveAttendee {
  readonly leaveTime?: number;
}

export interface AttendeesResult {
  eventId: string;
  instanceId: string;
  joined: AttendeeRecord[];
  left: AttendeeRecord[];
  /** Named joins of someone already present: not joined again, nothing delivered. */
  alreadyPresent: AttendeeRecord[];
  /** Deliveries answered 2xx. Both are 0 when no ATTENDEE_INFO configuration is registered. */
  delivered: number;
  failed: number;
  /** Up to 10 failed deliveries, to tell why. */
  failures: DeliveryResult[];
  activeAttendeeCount: number;
}

export type FaultInfo = Readonly<Fault>;

/** The sandbox's control surface, in process; the HTTP control API calls exactly these. */
export interface SandboxControl {
  setState(eventId: string, request: StateRequest): Promise<StateResult>;
  attendees(eventId: string, request: AttendeesRequest): Promise<AttendeesResult>;
  /** Who is present in the current instance now, in the order they joined. */
  present(eventId: string): { instanceId: string | null; present: LiveAttendee[] };
  addFault(fault: FaultRequest): FaultInfo[];
  faults(): FaultInfo[];
  clearFaults(): void;
  log(): CallLogEntry[];
  clearLog(): void;
}

export const DEFAULT_DELIVERY_CONCURRENCY = 16;
const MAX_ATTENDEES_PER_CALL = 100_000;
const MAX_CONCURRENCY = 256;

const bad = (message: string): never => {
  throw new SandboxControlError(400, message);
};

function parseStateRequest(input: unknown): StateRequest {
  if (!isPlainObject(input)) bad("the body must be a JSON object");
  const body = input as Record<string, unknown>;
  for (const k of Object.keys(body)) {
    if (k !== "state" && k !== "instanceId") bad(`unknown field "${k}"`);
  }
  if (!(EVENT_STATES as readonly unknown[]).includes(body.state)) {
    bad(`state must be one of ${EVENT_STATES.join(", ")}`);
  }
  const out: StateRequest = { state: body.state as EventState };
  if (body.instanceId !== undefined) {
    if (typeof body.instanceId !== "string" || body.instanceId === "") {
      bad("instanceId must be a non-empty string");
    }
    out.instanceId = body.instanceId as string;
  }
  return out;
}

function optionalString(v: unknown, name: string): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== "string" || v === "") bad(`${name} must be a non-empty string`);
  return v as string;
}

function integer(v: unknown, name: string, min: number, max: number): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) {
    bad(`${name} must be an integer from ${min} to ${max}`);
  }
  return v as number;
}

function parseAttendeesRequest(
  input: unknown,
): Required<Omit<AttendeesRequest, "at">> & Pick<AttendeesRequest, "at"> {
  if (!isPlainObject(input)) bad("the body must be a JSON object");
  const body = input as Record<string, unknown>;
  for (const k of Object.keys(body)) {
    if (!["join", "leave", "count", "concurrency", "at"].includes(k)) bad(`unknown field "${k}"`);
  }
  const join: AttendeeJoin[] = [];
  if (body.join !== undefined) {
    if (!Array.isArray(body.join)) bad("join must be an array");
    for (const j of body.join as unknown[]) {
      if (!isPlainObject(j)) bad("each join is an object with a name");
      const entry = j as Record<string, unknown>;
      for (const k of Object.keys(entry)) {
        if (!["name", "email", "endpointType"].includes(k)) bad(`unknown join field "${k}"`);
      }
      const name = optionalString(entry.name, "join[].name");
      if (name === undefined) bad("join[].name is required");
      const email = optionalString(entry.email, "join[].email");
      const endpointType = optionalString(entry.endpointType, "join[].endpointType");
      join.push({
        name: name as string,
        ...(email === undefined ? {} : { email }),
        ...(endpointType === undefined ? {} : { endpointType }),
      });
    }
  }
  const leave: string[] = [];
  if (body.leave !== undefined) {
    if (!Array.isArray(body.leave)) bad("leave must be an array of endpointGuids");
    for (const g of body.leave as unknown[]) {
      leave.push(optionalString(g, "leave[]") ?? bad("leave[] must be a non-empty string"));
    }
    if (new Set(leave).size !== leave.length) bad("leave names an endpointGuid twice");
  }
  const count =
    body.count === undefined ? 0 : integer(body.count, "count", 0, MAX_ATTENDEES_PER_CALL);
  if (join.length + count > MAX_ATTENDEES_PER_CALL) {
    bad(`at most ${MAX_ATTENDEES_PER_CALL} joins per call`);
  }
  const concurrency =
    body.concurrency === undefined
      ? DEFAULT_DELIVERY_CONCURRENCY
      : integer(body.concurrency, "concurrency", 1, MAX_CONCURRENCY);
  const at = body.at === undefined ? undefined : integer(body.at, "at", 0, Number.MAX_SAFE_INTEGER);
  return { join, leave, count, concurrency, ...(at === undefined ? {} : { at }) };
}

export interface ControlDeps {
  now(): number;
  events: EventsService;
  deliverer: Deliverer;
  faults: FaultQueue;
  log: CallLog;
}

/** Who an attendee is, for "already present": the name and e-mail they join with. */
function personKey(a: { name: string; email?: string }): string {
  return `${a.name}\u0000${a.email ?? ""}`;
}

export function createControl(deps: ControlDeps): SandboxControl {
  // Operations on one event run one after another, so with concurrency 1 the receiver sees an
  // event's messages in the order the control calls were made.
  const chains = new Map<string, Promise<unknown>>();
  function serialized<T>(eventId: string, op: () => Promise<T>): Promise<T> {
    const previous = chains.get(eventId) ?? Promise.resolve();
    const run = previous.then(op, op);
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    chains.set(eventId, settled);
    void settled.then(() => {
      if (chains.get(eventId) === settled) chains.delete(eventId);
    });
    return run;
  }

  function event(eventId: string): StoredEvent {
    const found = deps.events.findEvent(eventId);
    if (found === undefined) throw new SandboxControlError(404, `no event ${eventId}`);
    return found;
  }

  function currentInstance(e: StoredEvent): string {
    e.live.instanceId ??= randomUUID();
    return e.live.instanceId;
  }

  return {
    async setState(eventId, request) {
      const req = parseStateRequest(request);
      event(eventId);
      return serialized(eventId, async () => {
        const e = event(eventId);
        if (req.instanceId !== undefined && req.instanceId !== e.live.instanceId) {
          e.live.instanceId = req.instanceId;
          e.live.attendees = new Map();
        }
        const instanceId = currentInstance(e);
        e.live.state = req.state;
        const target = e.webhooks.get("EVENT_STATE");
        const deliveries: DeliveryResult[] = [];
        if (target !== undefined) {
          deliveries.push(
            await deps.deliverer.deliver(target, {
              eventId,
              instanceId,
              type: "EVENT_STATE",
              info: { state: req.state },
            }),
          );
        }
        return { eventId, instanceId, state: req.state, deliveries };
      });
    },

    async attendees(eventId, request) {
      const req = parseAttendeesRequest(request);
      event(eventId);
      return serialized(eventId, async () => {
        const e = event(eventId);
        const instanceId = currentInstance(e);
        const present = e.live.attendees;
        const unknown = req.leave.find((g) => !present.has(g));
        if (unknown !== undefined) {
          throw new SandboxControlError(400, `no present attendee ${unknown} in this instance`);
        }
        const now = req.at ?? deps.now();
        // One attendee is one endpoint, present once: someone already in (same name and
        // e-mail) who "joins" again is not a new attendee, and the service says nothing.
        const here = new Set([...present.values()].map(personKey));
        const alreadyPresent: AttendeeRecord[] = [];
        const joined: LiveAttendee[] = [];
        for (const j of req.join) {
          const a: LiveAttendee = {
            endpointGuid: randomUUID(),
            endpointType: j.endpointType ?? "browser",
            name: j.name,
            ...(j.email === undefined ? {} : { email: j.email }),
            joinTime: now,
          };
          if (here.has(personKey(a))) {
            alreadyPresent.push(
              [...present.values()].find((p) => personKey(p) === personKey(a)) ?? a,
            );
            continue;
          }
          here.add(personKey(a));
          joined.push(a);
        }
        for (let i = 0; i < req.count; i += 1) {
          e.live.synthetic += 1;
          const n = e.live.synthetic;
          joined.push({
            endpointGuid: randomUUID(),
            endpointType: "browser",
            name: `Attendee ${n}`,
            email: `attendee-${n}@example.com`,
            joinTime: now,
          });
        }
        const left: AttendeeRecord[] = req.leave.map((g) => ({
          ...present.get(g)!,
          leaveTime: now,
        }));
        for (const a of joined) present.set(a.endpointGuid, a);
        for (const a of left) present.delete(a.endpointGuid);

        const target = e.webhooks.get("ATTENDEE_INFO");
        let outcome = { delivered: 0, failed: 0, failures: [] as DeliveryResult[] };
        if (target !== undefined) {
          const info = (a: AttendeeRecord, infoType: "JOIN" | "LEFT") => ({
            eventId,
            instanceId,
            type: "ATTENDEE_INFO",
            info: { ...a, infoType },
          });
          const messages = [
            ...joined.map((a) => info(a, "JOIN")),
            ...left.map((a) => info(a, "LEFT")),
          ];
          outcome = await deps.deliverer.deliverAll(target, messages, req.concurrency);
        }
        return {
          eventId,
          instanceId,
          joined,
          left,
          alreadyPresent,
          ...outcome,
          activeAttendeeCount: present.size,
        };
      });
    },

    present(eventId) {
      const e = event(eventId);
      return { instanceId: e.live.instanceId, present: [...e.live.attendees.values()] };
    },

    addFault(fault) {
      deps.faults.add(parseFault(fault));
      return deps.faults.list();
    },
    faults: () => deps.faults.list(),
    clearFaults: () => deps.faults.clear(),
    log: () => deps.log.list(),
    clearLog: () => deps.log.clear(),
  };
}

const STATE_PATH = /^\/events\/([^/]+)\/state$/;
const ATTENDEES_PATH = /^\/events\/([^/]+)\/attendees$/;

/** The HTTP control API; `path` is after `/_sandbox/control`. */
export async function handleControl(
  control: SandboxControl,
  method: string,
  path: string,
  rawBody: Buffer,
): Promise<Reply> {
  const body = (): unknown => {
    if (rawBody.length === 0) return {};
    const parsed = parseJson(rawBody);
    if (parsed === undefined) bad("the body is not valid JSON");
    return parsed;
  };
  const notAllowed = (): Reply => ({ status: 405, json: { error: `${method} not allowed here` } });
  try {
    let m = STATE_PATH.exec(path);
    if (m) {
      if (method !== "POST") return notAllowed();
      const result = await control.setState(decodeURIComponent(m[1]!), body() as StateRequest);
      return { status: 200, json: result };
    }
    m = ATTENDEES_PATH.exec(path);
    if (m) {
      if (method === "GET") {
        return { status: 200, json: control.present(decodeURIComponent(m[1]!)) };
      }
      if (method !== "POST") return notAllowed();
      const result = await control.attendees(decodeURIComponent(m[1]!), body() as AttendeesRequest);
      return { status: 200, json: result };
    }
    if (path === "/faults") {
      if (method === "GET") return { status: 200, json: { faults: control.faults() } };
      if (method === "POST") {
        return { status: 200, json: { faults: control.addFault(body() as FaultRequest) } };
      }
      if (method === "DELETE") {
        control.clearFaults();
        return { status: 200, json: { faults: [] } };
      }
      return notAllowed();
    }
    if (path === "/log") {
      if (method === "GET") return { status: 200, json: { entries: control.log() } };
      if (method === "DELETE") {
        control.clearLog();
        return { status: 200, json: { entries: [] } };
      }
      return notAllowed();
    }
    return { status: 404, json: { error: `no control operation ${method} ${path}` } };
  } catch (err) {
    if (err instanceof SandboxControlError) {
      return { status: err.status, json: { error: err.message } };
    }
    if (err instanceof URIError) return { status: 400, json: { error: "bad percent-encoding" } };
    throw err;
  }
}
