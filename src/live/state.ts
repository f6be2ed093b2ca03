import { hasBegun } from "../domain/instance-end.ts";
import type { EventState, WebhookMessage } from "../upstream/events/schemas.ts";
import type { InstanceLive, Person, StaffRole } from "./instance.ts";
import {
  adoptEncoding,
  chunkText,
  currentEncoding,
  decodeSessions,
  ENCODE_CHUNK,
  encodeCached,
  encodingOf,
  touched,
} from "./session-codec.ts";

export type { InstanceLive, Person, StaffRole } from "./instance.ts";
export { decodeSessions, encodeSessions } from "./session-codec.ts";

/**
 * The live figures of one event, per instance, as pure data: applying a webhook message is
 * idempotent (a session is keyed by endpointGuid + joinTime), so a retried or replayed message
 * changes nothing and yields no notice. That is how "the same message twice is counted once"
 * holds without a claim per message on the hot path: the event's single owner (see event-run.ts)
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

export interface Notice {
  kind: "join" | "leave";
  name: string;
  email?: string;
  instanceId: string;
}

/** What the store keeps: compact, one JSON value per event, rewritten per batch (not per message). */
export interface PersistedInstance {
  id: string;
  state?: EventState;
  peak: number;
  /** One line per endpoint (encodeSessions); absent when kept in `chunks`, as the engine does. */
  sessions?: string;
  /** How many chunks of ENCODE_CHUNK endpoints the sessions are kept in, beside the record. */
  chunks?: number;
  /** Chunks' generations as runs (live-record.ts gensRuns); absent from earlier versions. */
  gens?: number[];
  staff: Array<[string, StaffRole, string]>;
  marks?: Array<[string, number]>;
  endedAt?: number;
  lastAt?: number;
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
    people: new Map(),
    marks: [],
    endedAt: undefined,
    lastAt: 0,
  };
}

function persistTimes(inst: InstanceLive, p: PersistedInstance): void {
  if (inst.state !== undefined) p.state = inst.state;
  if (inst.marks.length > 0) p.marks = inst.marks.map((m) => [m[0], m[1]]);
  if (inst.endedAt !== undefined) p.endedAt = inst.endedAt;
  if (inst.lastAt > 0) p.lastAt = inst.lastAt;
}

function endInstance(inst: InstanceLive, at: number): void {
  inst.endedAt = at;
  inst.marks.push(["ENDED", at]);
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

  private instance(id: string, at: number): InstanceLive {
    let inst = this.instances.get(id);
    if (!inst) {
      // A new instance ends the one before it, if that one had begun and not ended yet.
      const prev = this.current();
      if (prev && prev.endedAt === undefined && hasBegun(prev)) {
        endInstance(prev, at);
      }
      inst = newInstance(id);
      this.instances.set(id, inst);
      this.order.push(id);
      // Old instances keep their figures for the record but not their sessions forever.
      while (this.order.length > MAX_INSTANCES) {
        const old = this.order.shift();
        if (old !== undefined) {
          this.instances.delete(old);
          this.droppedIds.push(old);
        }
      }
    }
    return inst;
  }

  /** `at`: when the message arrived (state changes carry no time of their own). */
  apply(msg: WebhookMessage, staffEmails?: StaffEmails, at = Date.now()): ApplyResult {
    const inst = this.instance(msg.instanceId, at);
    const isCurrent = this.current() === inst;
    inst.lastAt = Math.max(inst.lastAt, at);
    if (msg.type === "EVENT_STATE") {
      const next = msg.info.state;
      if (!isEventState(next)) return { changed: false, notices: [] };
      // A later NOT_STARTED for an instance that had begun: it is over (the card stays as it was).
      if (next === "NOT_STARTED" && inst.state !== undefined && STATE_RANK[inst.state] > 0) {
        if (inst.endedAt === undefined) endInstance(inst, at);
        return { changed: false, notices: [] };
      }
      // Forward only within an instance: a late or repeated message never moves the card back.
      if (inst.state !== undefined && STATE_RANK[next] <= STATE_RANK[inst.state]) {
        return { changed: false, notices: [] };
      }
      inst.state = next;
      inst.marks.push([next, at]);
      return { changed: isCurrent, notices: [] };
    }
    const info = msg.info;
    const guid = info.endpointGuid;
    let flat = inst.sessions.get(guid);
    const wasIn = flat !== undefined && isOpen(flat);
    const notices: Notice[] = [];
    // Literals, not spreads of a `who` object: this runs once per webhook message.
    const notice = (kind: Notice["kind"]): Notice =>
      info.email
        ? { kind, name: info.name, email: info.email, instanceId: inst.id }
        : { kind, name: info.name, instanceId: inst.id };
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
      // One attendee is one endpointGuid, present once: a JOIN while already in (its LEFT was
      // lost) changes no figure and is no news for the thread.
      if (!wasIn) notices.push(notice("join"));
    } else {
      const leaveTime = info.leaveTime ?? info.joinTime;
      if (idx >= 0) {
        if (flat?.[idx + 1] !== 0) return { changed: false, notices: [] };
        flat[idx + 1] = Math.max(leaveTime, 1);
        inst.leaves++;
        notices.push(notice("leave"));
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
        notices.push(notice("join"), notice("leave"));
      }
    }
    const known = inst.people.get(guid);
    if (
      !known ||
      known.name !== info.name ||
      known.email !== info.email ||
      known.endpointType !== info.endpointType
    ) {
      const person: Person = { name: info.name, endpointType: info.endpointType };
      if (info.email) person.email = info.email;
      inst.people.set(guid, person);
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
      persistTimes(inst, p);
      return [p];
    });
  }

  /**
   * What a persist writes: the instances without their sessions (a few hundred bytes), the text
   * of each chunk of sessions changed since the last persist, and the instances dropped since.
   * A turn of a 50,000-attendee event rewrites a few chunks, not every session.
   */
  persist(): {
    instances: PersistedInstance[];
    chunks: Array<{ instanceId: string; n: number; text: string }>;
    dropped: string[];
  } {
    const chunks: Array<{ instanceId: string; n: number; text: string }> = [];
    const instances = this.order.flatMap((id) => {
      const inst = this.instances.get(id);
      if (!inst) return [];
      const e = currentEncoding(inst);
      for (const n of e.dirty) chunks.push({ instanceId: id, n, text: chunkText(inst, e, n) });
      e.dirty.clear();
      const p: PersistedInstance = {
        id,
        peak: inst.peak,
        chunks: Math.ceil(e.guids.length / ENCODE_CHUNK),
        staff: [...inst.staff].map(([g, r]) => [g, r.role, r.name] as [string, StaffRole, string]),
      };
      persistTimes(inst, p);
      return [p];
    });
    const dropped = this.droppedIds.splice(0);
    return { instances, chunks, dropped };
  }

  /** A persist whose write failed: its chunks are written again next time. */
  redirty(chunks: ReadonlyArray<{ instanceId: string; n: number }>): void {
    for (const c of chunks) {
      const inst = this.instances.get(c.instanceId);
      const e = inst ? encodingOf(inst) : undefined;
      e?.dirty.add(c.n);
    }
  }

  /** Instances pushed out (MAX_INSTANCES) since the last persist, whose chunks can go. */
  private readonly droppedIds: string[] = [];

  /** Rebuilds from the stored form (chunk texts through `chunk`); figures are derived again. */
  static from(
    stored: readonly PersistedInstance[] | undefined,
    chunk: (instanceId: string, n: number) => string | undefined = () => undefined,
  ): EventLive {
    const live = new EventLive();
    for (const p of stored ?? []) {
      const inst = newInstance(p.id);
      if (p.state !== undefined && isEventState(p.state)) inst.state = p.state;
      const texts =
        p.sessions !== undefined
          ? [p.sessions]
          : Array.from({ length: p.chunks ?? 0 }, (_, n) => chunk(p.id, n) ?? "");
      const ends: number[] = [];
      for (const text of texts) {
        for (const [guid, flat, person] of decodeSessions(text)) {
          inst.sessions.set(guid, flat);
          if (person) inst.people.set(guid, person);
          inst.unique++;
          for (let i = 0; i < flat.length; i += 2) {
            inst.joins++;
            if (flat[i + 1] !== 0) inst.leaves++;
          }
          if (isOpen(flat)) inst.present++;
        }
        ends.push(inst.sessions.size);
      }
      if (p.sessions === undefined) adoptEncoding(inst, texts, ends);
      inst.peak = Math.max(p.peak, inst.present);
      for (const [guid, role, name] of p.staff) inst.staff.set(guid, { role, name });
      for (const m of p.marks ?? []) inst.marks.push([m[0], m[1]]);
      inst.endedAt = p.endedAt;
      // A record from before lastAt was kept: its quiet period starts now.
      inst.lastAt = p.lastAt ?? Date.now();
      live.instances.set(p.id, inst);
      live.order.push(p.id);
    }
    return live;
  }
}

/** Instances kept per event (a daily series keeps the last few days). */
export const MAX_INSTANCES = 5;
