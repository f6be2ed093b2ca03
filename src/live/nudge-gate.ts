/**
 * Whether a store must nudge the live engine. Thousands of messages are stored a second; the
 * engine needs to hear of them only once per outbox read: a nudge that arrives while it reads
 * makes it read again after, and one that arrives before it reads is answered by that read. So
 * the flag is raised as each read begins (`reading`, the engine's side) and taken back by the
 * first store after it (`stored`, the route's side), which alone sends a nudge. A store that
 * finds the flag down comes after a nudge whose read has not listed the outbox yet, or during a
 * read that will be followed by another: either way a read that sees it is already due.
 *
 * One Int32 in a SharedArrayBuffer, so the two sides may be on different threads (the route on
 * the main thread, the engine on its worker: a postMessage per message cost the route ~15 µs).
 */
export class NudgeGate {
  private readonly flag: Int32Array;

  constructor(readonly buffer: SharedArrayBuffer = NudgeGate.raisedFlag()) {
    this.flag = new Int32Array(buffer);
  }

  /** A flag raised: the first store nudges. */
  static raisedFlag(): SharedArrayBuffer {
    const b = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT);
    Atomics.store(new Int32Array(b), 0, 1);
    return b;
  }

  /** The engine: a read of the outbox begins; anything stored from now on needs a nudge. */
  reading(): void {
    Atomics.store(this.flag, 0, 1);
  }

  /** The route: a message was stored; true when this store must send the nudge. */
  stored(): boolean {
    return Atomics.exchange(this.flag, 0, 0) === 1;
  }
}
