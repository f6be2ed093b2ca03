import { randomUUID } from "node:crypto";
import type { Logger } from "../log.ts";
import type { KeyValueStore } from "../store/kv.ts";

/**
 * Who owns an event's live work on a store several processes share (Redis, Postgres): one
 * lease per event, `live-lease:<team>:<event>`, holding the owning engine's id. Taken with
 * claimOnce; extended and given back only by compare-and-set on that id, so an engine never
 * extends or deletes a lease another has taken since its own lapsed. SQLite and memory stores
 * belong to one process and need none (see LiveEngine).
 */
export class EventLeases {
  /** What this engine's leases hold. */
  readonly owner = randomUUID();

  constructor(
    private readonly store: Pick<KeyValueStore, "claimOnce" | "update">,
    private readonly logger: Logger,
    /** How long a lease lasts unless extended. */
    readonly ms: number,
  ) {}

  private key(team: string, eventId: string): string {
    return `live-lease:${team}:${eventId}`;
  }

  /** The lease's end, or undefined when someone else holds it. */
  async take(team: string, eventId: string): Promise<number | undefined> {
    const at = Date.now();
    // Held with our own id, it is ours: an extension that timed out here (a frozen store) and
    // landed later, after this engine let the event go. Taken back, or it would wait a lease out.
    if (
      !(await this.store.claimOnce(this.key(team, eventId), this.ms, this.owner)) &&
      !(await this.cas(team, eventId, this.ms))
    ) {
      return undefined;
    }
    this.logger.info({ event: eventId, owner: this.owner }, "live: owning an event");
    return at + this.ms;
  }

  /** The new end, or undefined when the lease lapsed or is someone else's. */
  async extend(team: string, eventId: string): Promise<number | undefined> {
    const at = Date.now();
    return (await this.cas(team, eventId, this.ms)) ? at + this.ms : undefined;
  }

  /** Ends the lease now if it is still ours (a lease of 1 ms); true when it was. */
  giveBack(team: string, eventId: string): Promise<boolean> {
    return this.cas(team, eventId, 1);
  }

  private cas(team: string, eventId: string, ms: number): Promise<boolean> {
    return this.store.update<string>(this.key(team, eventId), (held) =>
      held === this.owner ? { value: this.owner, ttlMs: ms } : undefined,
    );
  }
}
