/**
 * Where the engine's sweep for items set aside (set-aside.ts, readableHeld) reads next, and the
 * rule for moving on: past a page handled to its end; not past a page the store cut short, which
 * the next sweep reads again; past it all the same when the store cut it short twice in a row
 * from the same place, so that one event whose replay fails the store every time (a timeout on
 * an oversized record, say) cannot hold back the records after it. Pure: the engine owns one and
 * tells it how each sweep ended.
 */
export class HeldCursor {
  private after: string | undefined;
  /** Where the last sweep the store cut short read from (undefined: the last was not). */
  private cutShortFrom: { from: string | undefined } | undefined;

  /** Where the next sweep reads on from (undefined: the start). */
  get from(): string | undefined {
    return this.after;
  }

  /** The sweep that read from `from` handled its whole page, whose last record is `next`. */
  handled(next: string | undefined): void {
    this.cutShortFrom = undefined;
    this.after = next;
  }

  /** The store cut short the sweep that read from `from` (its page ending at `next`). */
  cutShort(from: string | undefined, next: string | undefined): void {
    const again = this.cutShortFrom !== undefined && this.cutShortFrom.from === from;
    this.cutShortFrom = again ? undefined : { from };
    if (again) this.after = next;
  }
}
