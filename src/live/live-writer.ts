import {
  type KeyValueStore,
  type Repository,
  STORE_ERROR_CODES,
  StoreError,
} from "../store/index.ts";
import {
  type ChannelPosting,
  chunkGens,
  gensRuns,
  instanceKey,
  type LiveRecord,
  type StoredChunks,
  sessionsId,
} from "./live-record.ts";
import type { EventLive } from "./state.ts";

/**
 * Writes an owned event's state: the chunks of sessions a turn changed, then the live record
 * (figures, each channel's notices not yet posted) that names them.
 *
 * Those are two writes, so a process can die between them. Chunks are therefore never rewritten
 * in place: each save writes the ones it changed under a new generation (`…:{n}.{gen}`) and the
 * record names the generation of every chunk. Until the record lands, the stored record still
 * names the earlier versions, which stay untouched: whoever loads the event next reads one
 * save, whole, and replaying the outbox onto it announces again the attendees that save had not
 * recorded. (Rewritten in place, a crash there paired new sessions with an old record: the
 * replay found everyone already counted and announced nobody, and the digests stayed short of
 * the card for good.)
 *
 * A save the store refused is written again under the same generation (its keys are named by no
 * record), so a store that keeps refusing the record does not pile up copies. A save that timed
 * out (or lost its connection) may have landed all the same: its generation is never reused. The versions a
 * landed record no longer names are garbage: the engine deletes them with a turn's outbox items,
 * once they are GARBAGE_GRACE_MS old, so that a reader who read the record just before
 * (figures, a report) still finds what it names; any a crash leaves behind are found at the
 * next load.
 */

/** A store write that was not answered in time, or whose connection failed, may have landed. */
function mayHaveLanded(err: unknown): boolean {
  return (
    err instanceof StoreError &&
    (err.code === STORE_ERROR_CODES.timeout || err.code === STORE_ERROR_CODES.unavailable)
  );
}

/** How long a replaced chunk version stays readable after the record that replaced it landed. */
export const GARBAGE_GRACE_MS = 5_000;

export class LiveWriter {
  /** instanceId → the generation of each chunk as last written (0: an earlier version's key). */
  private readonly gens = new Map<string, number[]>();
  private nextGen: number;
  /** Chunk ids replaced since the last record that landed: garbage once the next one does. */
  private superseded: string[] = [];
  /** Store keys no landed record names, with when they became so. */
  private garbage: Array<{ key: string; at: number }>;
  private readonly lives: Repository<LiveRecord>;
  private readonly sessions: Repository<string>;
  private readonly store: Pick<KeyValueStore, "deletePrefix">;

  constructor(
    io: {
      lives: Repository<LiveRecord>;
      sessions: Repository<string>;
      store: Pick<KeyValueStore, "deletePrefix">;
    },
    private readonly team: string,
    private readonly eventId: string,
    record: LiveRecord | undefined,
    stored: StoredChunks,
  ) {
    this.lives = io.lives;
    this.sessions = io.sessions;
    this.store = io.store;
    let max = stored.maxGen;
    for (const p of record?.instances ?? []) {
      const gens = chunkGens(p.chunks ?? 0, p.gens);
      for (const g of gens) max = Math.max(max, g);
      this.gens.set(p.id, gens);
    }
    this.nextGen = max + 1;
    // Left by a process that died mid-save: no record names them.
    this.garbage = stored.unnamed.map((id) => ({ key: this.sessions.key(id), at: 0 }));
  }

  /** Writes the state; rejects (and leaves the stored save as it was) when either write fails. */
  async write(live: EventLive, channels: Record<string, ChannelPosting>): Promise<void> {
    const { instances, chunks, dropped } = live.persist();
    const gen = this.nextGen++;
    const supersededBefore = this.superseded.length;
    const undo: Array<{ gens: number[]; n: number; before: number | undefined }> = [];
    const writes = chunks.map((c) => {
      let gens = this.gens.get(c.instanceId);
      if (!gens) {
        gens = [];
        this.gens.set(c.instanceId, gens);
      }
      const before = gens[c.n];
      undo.push({ gens, n: c.n, before });
      if (before !== undefined) this.superseded.push(this.id(c.instanceId, c.n, before));
      gens[c.n] = gen;
      return { id: this.id(c.instanceId, c.n, gen), text: c.text };
    });
    for (const p of instances) {
      if (!p.chunks) continue;
      const runs = gensRuns(this.gens.get(p.id) ?? [], p.chunks);
      if (runs) p.gens = runs;
    }
    try {
      // The chunks first: a record never names chunks not yet written.
      await Promise.all(writes.map((w) => this.sessions.put(w.id, w.text)));
      await this.lives.put(`${this.team}:${this.eventId}`, {
        team: this.team,
        eventId: this.eventId,
        instances,
        channels,
        updatedAt: Date.now(),
      });
    } catch (err) {
      if (mayHaveLanded(err)) {
        // A timed-out write may still land: then the stored record names this generation, and
        // rewriting its chunks in place would pair that record's notices with later sessions
        // (a replay would find the later attendees counted and announce none of them). The next
        // save writes them under a new generation instead; both this one's and the earlier
        // versions go once a record surely names neither.
        for (const w of writes) this.superseded.push(w.id);
      } else {
        // Refused: as if not tried; the next save writes these chunks again under this generation.
        for (const u of undo.reverse()) {
          if (u.before === undefined) delete u.gens[u.n];
          else u.gens[u.n] = u.before;
        }
        this.superseded.length = supersededBefore;
        this.nextGen = gen;
      }
      live.redirty(chunks);
      throw err;
    }
    const at = Date.now();
    for (const id of this.superseded) this.garbage.push({ key: this.sessions.key(id), at });
    this.superseded = [];
    for (const instanceId of dropped) {
      // Back in this very save (a late message): its chunks are the ones just named.
      if (instances.some((p) => p.id === instanceId)) continue;
      this.gens.delete(instanceId);
      const prefix = `${this.team}:${this.eventId}:${instanceKey(instanceId)}:`;
      await this.store.deletePrefix(this.sessions.key(prefix)).catch(() => undefined);
    }
  }

  /**
   * Deletes `keys` (the turn's outbox items) with the garbage old enough to go, in one call; if
   * that fails, the garbage is kept for the next.
   */
  async deleteWith(
    keys: readonly string[],
    deleteMany: (keys: readonly string[]) => Promise<unknown>,
    all = false,
  ): Promise<void> {
    const until = all ? Number.POSITIVE_INFINITY : Date.now() - GARBAGE_GRACE_MS;
    const due = this.garbage.filter((g) => g.at <= until);
    if (due.length === 0 && keys.length === 0) return;
    if (due.length > 0) this.garbage = this.garbage.filter((g) => g.at > until);
    try {
      await deleteMany([...keys, ...due.map((g) => g.key)]);
    } catch (err) {
      this.garbage.push(...due);
      throw err;
    }
  }

  private id(instanceId: string, n: number, gen: number): string {
    return sessionsId(this.team, this.eventId, instanceId, n, gen);
  }
}
