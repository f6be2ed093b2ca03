import type { WriteEntry } from "./backends/types.ts";

/**
 * Group commit: writes issued while earlier groups are being written go out together as the
 * next one, in one atomic backend write (one SQLite statement, one Redis script, one Postgres
 * statement). A backend has a few groups in flight at most (`maxInFlight`: one on SQLite's and
 * Redis's single connection, a few on Postgres's pool so one slow commit, such as a large
 * record's, does not hold every webhook behind it), so a group grows with the backend's
 * latency: alone, a write goes out on the next turn of the event loop; under load, hundreds
 * share one commit. A key already in flight waits for the next group: two writes of one key
 * never race, the later value lands last. Each caller's promise settles with the group that holds its write: resolved once that
 * group has committed, rejected when it failed, so a webhook is acknowledged only for a
 * message that is stored and a failed group fails exactly its own messages.
 *
 * Every write is bounded from the moment it is queued: one still queued (behind a group stuck
 * on a frozen server) or in flight past `timeoutMs` is rejected with `onTimeout`'s error and
 * never retried here. A group that times out may still commit later, when the server thaws; its
 * callers were told it failed, so a webhook sender retries and the duplicate is harmless
 * (applying a message is idempotent, see live/state.ts).
 */

interface Waiter {
  resolve(): void;
  reject(err: Error): void;
}

interface Pending {
  raw: string;
  ttlMs: number | undefined;
  /** Epoch ms after which the write is failed. The first write of a key sets it. */
  deadline: number;
  waiters: Waiter[];
}

interface Group {
  keys: string[];
  pending: Pending[];
  deadline: number;
  settled: boolean;
}

export interface GroupWriterOptions {
  write(entries: readonly WriteEntry[]): Promise<void>;
  /** Entries per backend write; more queued than this go out as consecutive groups. */
  maxBatch: number;
  /** Groups in flight at once. */
  maxInFlight: number;
  timeoutMs: number;
  /** The error for writes past their deadline; `key` when it is one write. */
  onTimeout(key: string | undefined): Error;
  /** Wraps a backend failure for each caller (one error object per group). */
  onFailure(err: unknown, keys: readonly string[]): Error;
}

/** How often queued and in-flight writes are checked against their deadline. */
const WATCH_MS = 100;

export class GroupWriter {
  private pending = new Map<string, Pending>();
  private readonly inflight = new Set<Group>();
  /** Keys of the groups in flight. */
  private readonly busy = new Set<string>();
  private inflightWrites = 0;
  private scheduled = false;
  private watchdog: NodeJS.Timeout | undefined;

  constructor(private readonly opts: GroupWriterOptions) {}

  /** Writes queued or in flight: what a frozen store has not yet answered. */
  get size(): number {
    return this.pending.size + this.inflightWrites;
  }

  /** Resolves when the group holding this write has committed. */
  write(key: string, raw: string, ttlMs: number | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const p = this.pending.get(key);
      if (p) {
        // The same key again before its group went out: the later value wins, as it would in
        // sequence, and both callers learn the outcome of the one write.
        p.raw = raw;
        p.ttlMs = ttlMs;
        p.waiters.push({ resolve, reject });
      } else {
        this.pending.set(key, {
          raw,
          ttlMs,
          deadline: Date.now() + this.opts.timeoutMs,
          waiters: [{ resolve, reject }],
        });
      }
      this.kick();
      this.watch();
    });
  }

  /**
   * Whether `key` (or, with `prefix`, any key under it) has a write queued or in flight: a
   * delete or claim of it must wait for that write (see settled()), or it could land first.
   */
  touches(key: string, prefix = false): boolean {
    if (!prefix) return this.pending.has(key) || this.busy.has(key);
    for (const k of this.busy) if (k.startsWith(key)) return true;
    for (const k of this.pending.keys()) if (k.startsWith(key)) return true;
    return false;
  }

  /** Resolves (never rejects) once every write queued or in flight now has settled. */
  settled(): Promise<void> {
    const all: Array<Promise<void>> = [];
    const track = (p: Pending) =>
      all.push(new Promise<void>((r) => p.waiters.push({ resolve: r, reject: () => r() })));
    for (const p of this.pending.values()) track(p);
    for (const g of this.inflight) if (g.pending[0]) track(g.pending[0]);
    return Promise.all(all).then(() => undefined);
  }

  private kick(): void {
    if (this.scheduled || this.inflight.size >= this.opts.maxInFlight) return;
    this.scheduled = true;
    // setImmediate, not a microtask: every request parsed in this poll phase joins the group.
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    if (this.inflight.size >= this.opts.maxInFlight || this.pending.size === 0) return;
    const group: Group = {
      keys: [],
      pending: [],
      deadline: Number.POSITIVE_INFINITY,
      settled: false,
    };
    const entries: WriteEntry[] = [];
    let full = false;
    for (const [key, p] of this.pending) {
      if (entries.length >= this.opts.maxBatch) {
        full = true;
        break;
      }
      // Its earlier write is still in flight: this one goes in a later group.
      if (this.busy.has(key)) continue;
      this.pending.delete(key);
      this.busy.add(key);
      group.keys.push(key);
      group.pending.push(p);
      if (p.deadline < group.deadline) group.deadline = p.deadline;
      entries.push({ key, raw: p.raw, ttlMs: p.ttlMs });
    }
    // Every queued key is in flight already: the next settle sends them.
    if (entries.length === 0) return;
    this.inflight.add(group);
    this.inflightWrites += entries.length;
    let written: Promise<void>;
    try {
      written = this.opts.write(entries);
    } catch (err) {
      written = Promise.reject(err);
    }
    written.then(
      () => this.settle(group, undefined),
      (err: unknown) => this.settle(group, this.opts.onFailure(err, group.keys)),
    );
    // More than one group's worth queued: the next goes when there is room. (Writes of a key
    // still in flight wait for that group to settle, which kicks again.)
    if (full) this.kick();
  }

  /** Settles a group once (its write answered, or its deadline passed first). */
  private settle(group: Group, err: Error | undefined): void {
    if (group.settled) return;
    group.settled = true;
    this.inflight.delete(group);
    this.inflightWrites -= group.keys.length;
    for (const k of group.keys) this.busy.delete(k);
    for (const p of group.pending) {
      for (const w of p.waiters) err ? w.reject(err) : w.resolve();
    }
    if (this.pending.size > 0) this.kick();
    else if (this.inflight.size === 0) this.unwatch();
  }

  private watch(): void {
    if (this.watchdog) return;
    this.watchdog = setInterval(() => this.expire(), WATCH_MS);
    // A pending write keeps its caller waiting, not the process alive.
    this.watchdog.unref();
  }

  private unwatch(): void {
    if (!this.watchdog) return;
    clearInterval(this.watchdog);
    this.watchdog = undefined;
  }

  private expire(): void {
    const now = Date.now();
    for (const group of [...this.inflight]) {
      if (now < group.deadline) continue;
      // Stuck on the server: fail it and let the next group go (bounded too).
      this.settle(group, this.opts.onTimeout(group.keys.length === 1 ? group.keys[0] : undefined));
    }
    for (const [key, p] of this.pending) {
      if (now < p.deadline) continue;
      this.pending.delete(key);
      const err = this.opts.onTimeout(key);
      for (const w of p.waiters) w.reject(err);
    }
    if (this.pending.size === 0 && this.inflight.size === 0) this.unwatch();
  }
}
