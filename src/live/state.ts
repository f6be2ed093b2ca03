import type { EventState, WebhookMessage } from "../upstream/events/schemas.ts";

/**
 * The live figures of one event, per instance, as pure data: applying a webhook message is
 * idempotent (a session is keyed by endpointGuid + joinTime), so a retried or replayed message
 * changes nothing and yields no notice. That is how "the same message twice is counted once"
 * holds without a claim per message on the hot path: the event's single owner (see worker.ts)
 * applies messages in order and persists the result before the outbox items are removed.
 */

export const STATE_RANK: Readonly<Record<EventState, number>> = {
  NOT_STARTED: 0,
  PREP_EVENT: 1,
  IN_EVENT: 2,
};

export function isEventState(s: string): s is EventState {
  return Object.hasOwn(STATE_RANK, s);
}

export type StaffRole = "panelist" | "moderator";

export interface Notice {
  kind: "join" | "leave";
  name: string;
  email?: string;
  instanceId: string;
}

export interface InstanceLive {
  readonly id: string;
  /** Undefined until a state message arrives. */
  state: EventState | undefined;
  present: number;
  peak: number;
  /** Distinct endpointGuids seen. */
  unique: number;
  /** Sessions seen (a JOIN, or a LEFT whose JOIN never came). */
  joins: number;
  leaves: number;
  /** endpointGuid → flat [joinTime, leaveTime (0 = still in), …]. */
  readonly sessions: Map<string, number[]>;
  /** Staff matched by e-mail, by endpointGuid. */
  readonly staff: Map<string, { role: StaffRole; name: string }>;
}

/** What the store keeps: compact, one JSON value per event, rewritten per batch (not per message). */
export interface PersistedInstance {
  id: string;
  state?: EventState;
  peak: number;
  /**
   * One line per endpoint, `guid,joinTime,leaveTime,…` (see encodeSessions): a single string is
   * far cheaper to write and read than 10,000 small arrays.
   */
  sessions: string;
  staff: Array<[string, StaffRole, string]>;
}

export interface StaffEmails {
  panelists: ReadonlySet<string>;
  moderators: ReadonlySet<string>;
}

export interface ApplyResult {
  /** Something the card shows changed (state, figures, staff). */
  changed: boolean;
  notices: Notice[];
}

function newInstance(id: string): InstanceLive {
  return {
    id,
    state: undefined,
    present: 0,
    peak: 0,
    unique: 0,
    joins: 0,
    leaves: 0,
    sessions: new Map(),
    staff: new Map(),
  };
}

function isOpen(flat: readonly number[]): boolean {
  for (let i = 1; i < flat.length; i += 2) if (flat[i] === 0) return true;
  return false;
}

/** Instances of one event; the card shows the most recently started one. */
export class EventLive {
  readonly instances = new Map<string, InstanceLive>();
  /** Instance ids in the order first seen: the last is the current one. */
  readonly order: string[] = [];

  current(): InstanceLive | undefined {
    const id = this.order[this.order.length - 1];
    return id === undefined ? undefined : this.instances.get(id);
  }

  private instance(id: string): InstanceLive {
    let inst = this.instances.get(id);
    if (!inst) {
      inst = newInstance(id);
      this.instances.set(id, inst);
      this.order.push(id);
      // Old instances keep their figures for the record but not their sessions forever.
      while (this.order.length > MAX_INSTANCES) {
        const old = this.order.shift();
        if (old !== undefined) this.instances.delete(old);
      }
    }
    return inst;
  }

  apply(msg: WebhookMessage, staffEmails?: StaffEmails): ApplyResult {
    const inst = this.instance(msg.instanceId);
    const isCurrent = this.current() === inst;
    if (msg.type === "EVENT_STATE") {
      const next = msg.info.state;
      if (!isEventState(next)) return { changed: false, notices: [] };
      // Forward only within an instance: a late or repeated message never moves the card back.
      if (inst.state !== undefined && STATE_RANK[next] <= STATE_RANK[inst.state]) {
        return { changed: false, notices: [] };
      }
      inst.state = next;
      return { changed: isCurrent, notices: [] };
    }
    const info = msg.info;
    const guid = info.endpointGuid;
    let flat = inst.sessions.get(guid);
    const wasIn = flat !== undefined && isOpen(flat);
    const notices: Notice[] = [];
    const who = {
      name: info.name,
      ...(info.email ? { email: info.email } : {}),
      instanceId: inst.id,
    };
    let idx = -1;
    if (flat) {
      for (let i = 0; i < flat.length; i += 2) {
        if (flat[i] === info.joinTime) {
          idx = i;
          break;
        }
      }
    }
    if (info.infoType === "JOIN") {
      if (idx >= 0) return { changed: false, notices: [] };
      if (!flat) {
        flat = [];
        inst.sessions.set(guid, flat);
        inst.unique++;
      }
      flat.push(info.joinTime, 0);
      inst.joins++;
      notices.push({ kind: "join", ...who });
    } else {
      const leaveTime = info.leaveTime ?? info.joinTime;
      if (idx >= 0) {
        if (flat?.[idx + 1] !== 0) return { changed: false, notices: [] };
        flat[idx + 1] = Math.max(leaveTime, 1);
        inst.leaves++;
        notices.push({ kind: "leave", ...who });
      } else {
        // The JOIN was lost or is late: the session is recorded closed, so the JOIN, if it
        // comes, is recognised as already seen.
        if (!flat) {
          flat = [];
          inst.sessions.set(guid, flat);
          inst.unique++;
        }
        flat.push(info.joinTime, Math.max(leaveTime, 1));
        inst.joins++;
        inst.leaves++;
        notices.push({ kind: "join", ...who }, { kind: "leave", ...who });
      }
    }
    // This endpoint's line changed; every other encoded chunk is still exact.
    touched(inst, guid);
    const nowIn = flat !== undefined && isOpen(flat);
    if (nowIn && !wasIn) inst.present++;
    if (!nowIn && wasIn) inst.present--;
    if (inst.present > inst.peak) inst.peak = inst.present;
    const email = info.email?.toLowerCase();
    if (email && staffEmails && !inst.staff.has(guid)) {
      const role: StaffRole | undefined = staffEmails.moderators.has(email)
        ? "moderator"
        : staffEmails.panelists.has(email)
          ? "panelist"
          : undefined;
      if (role) inst.staff.set(guid, { role, name: info.name });
    }
    return { changed: isCurrent, notices };
  }

  /** Who of the staff is in now (display names), for the PREP_EVENT card. */
  staffIn(inst: InstanceLive): { panelists: string[]; moderators: string[] } {
    const out = { panelists: [] as string[], moderators: [] as string[] };
    for (const [guid, s] of inst.staff) {
      const flat = inst.sessions.get(guid);
      if (!flat || !isOpen(flat)) continue;
      (s.role === "panelist" ? out.panelists : out.moderators).push(s.name);
    }
    return out;
  }

  /** Attended time so far over distinct attendees, in minutes (open sessions count up to now). */
  averageMinutes(inst: InstanceLive, now: number): number {
    if (inst.unique === 0) return 0;
    let ms = 0;
    for (const flat of inst.sessions.values()) {
      for (let i = 0; i < flat.length; i += 2) {
        const j = flat[i] ?? 0;
        const l = flat[i + 1] ?? 0;
        ms += Math.max(0, (l === 0 ? now : l) - j);
      }
    }
    return ms / inst.unique / 60_000;
  }

  toJSON(): PersistedInstance[] {
    return this.order.flatMap((id) => {
      const inst = this.instances.get(id);
      if (!inst) return [];
      const p: PersistedInstance = {
        id,
        peak: inst.peak,
        sessions: encodeCached(inst),
        staff: [...inst.staff].map(([g, s]) => [g, s.role, s.name] as [string, StaffRole, string]),
      };
      if (inst.state !== undefined) p.state = inst.state;
      return [p];
    });
  }

  /** Rebuilds from the stored form; present, unique, joins and leaves are derived again. */
  static from(stored: readonly PersistedInstance[] | undefined): EventLive {
    const live = new EventLive();
    for (const p of stored ?? []) {
      const inst = newInstance(p.id);
      if (p.state !== undefined && isEventState(p.state)) inst.state = p.state;
      for (const [guid, flat] of decodeSessions(p.sessions)) {
        inst.sessions.set(guid, flat);
        inst.unique++;
        for (let i = 0; i < flat.length; i += 2) {
          inst.joins++;
          if (flat[i + 1] !== 0) inst.leaves++;
        }
        if (isOpen(flat)) inst.present++;
      }
      inst.peak = Math.max(p.peak, inst.present);
      for (const [guid, role, name] of p.staff) inst.staff.set(guid, { role, name });
      live.instances.set(p.id, inst);
      live.order.push(p.id);
    }
    return live;
  }
}

/** Instances kept per event (a daily series keeps the last few days). */
export const MAX_INSTANCES = 5;

const ESCAPES: Readonly<Record<string, string>> = { "%": "%25", ",": "%2C", "\n": "%0A" };

function escapeGuid(g: string): string {
  return /[%,\n]/.test(g) ? g.replace(/[%,\n]/g, (c) => ESCAPES[c] ?? c) : g;
}

function unescapeGuid(g: string): string {
  if (!g.includes("%")) return g;
  try {
    return decodeURIComponent(g);
  } catch {
    return g;
  }
}

/**
 * The encoded sessions, kept between persists in chunks of endpoints (in first-seen order). The
 * worker persists after every batch; re-encoding 20,000 unchanged sessions each time (and even
 * looking each one's cached line up) stalled the event loop for milliseconds per turn and showed
 * high in the ingest profile. Now a turn re-encodes only the chunks whose endpoints it touched
 * (a burst of new attendees touches the last one) and joins the chunk texts. apply() is the only
 * writer of sessions and marks the chunk of the endpoint it touches.
 */
const ENCODE_CHUNK = 256;

interface Encoding {
  /** Endpoints in the sessions map's order. */
  guids: string[];
  /** endpointGuid → position in `guids`. */
  index: Map<string, number>;
  /** The text of each chunk of ENCODE_CHUNK endpoints; undefined = to encode again. */
  texts: Array<string | undefined>;
}

const encodings = new WeakMap<InstanceLive, Encoding>();

function encodingFor(inst: InstanceLive): Encoding {
  const guids = [...inst.sessions.keys()];
  const index = new Map<string, number>();
  for (let i = 0; i < guids.length; i++) index.set(guids[i] as string, i);
  const e: Encoding = { guids, index, texts: new Array(Math.ceil(guids.length / ENCODE_CHUNK)) };
  encodings.set(inst, e);
  return e;
}

/** The endpoint's line changed (or is new): its chunk is encoded again at the next persist. */
function touched(inst: InstanceLive, guid: string): void {
  const e = encodings.get(inst);
  if (!e) return;
  let i = e.index.get(guid);
  if (i === undefined) {
    i = e.guids.length;
    e.guids.push(guid);
    e.index.set(guid, i);
  }
  e.texts[Math.floor(i / ENCODE_CHUNK)] = undefined;
}

function encodeLine(guid: string, flat: readonly number[]): string {
  return `${escapeGuid(guid)},${flat.join(",")}`;
}

function encodeCached(inst: InstanceLive): string {
  let e = encodings.get(inst);
  // Sessions are only ever added through apply(), which keeps the encoding in step; a size that
  // disagrees would mean another writer, and a fresh encoding is always right.
  if (!e || e.guids.length !== inst.sessions.size) e = encodingFor(inst);
  const chunks = Math.ceil(e.guids.length / ENCODE_CHUNK);
  for (let c = 0; c < chunks; c++) {
    if (e.texts[c] !== undefined) continue;
    const end = Math.min(e.guids.length, (c + 1) * ENCODE_CHUNK);
    const lines: string[] = [];
    for (let i = c * ENCODE_CHUNK; i < end; i++) {
      const guid = e.guids[i] as string;
      lines.push(encodeLine(guid, inst.sessions.get(guid) ?? []));
    }
    e.texts[c] = lines.join("\n");
  }
  return e.texts.slice(0, chunks).join("\n");
}

export function encodeSessions(sessions: ReadonlyMap<string, readonly number[]>): string {
  const lines: string[] = [];
  for (const [guid, flat] of sessions) lines.push(encodeLine(guid, flat));
  return lines.join("\n");
}

/** Lines that do not parse are skipped: one bad line must not lose the rest. */
export function decodeSessions(text: unknown): Array<[string, number[]]> {
  if (typeof text !== "string" || text === "") return [];
  const out: Array<[string, number[]]> = [];
  for (const line of text.split("\n")) {
    const parts = line.split(",");
    const guid = parts[0];
    if (guid === undefined || guid === "" || parts.length < 3 || parts.length % 2 === 0) continue;
    const flat = parts.slice(1).map(Number);
    if (flat.some((n) => !Number.isFinite(n))) continue;
    out.push([unescapeGuid(guid), flat]);
  }
  return out;
}
