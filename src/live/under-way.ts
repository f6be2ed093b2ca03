/**
 * Slack calls a dropped run left under way, per channel: what the next run of the same event
 * waits for, channel by channel, before it calls Slack there (Lane's `after`). Each resolves to
 * when the channel may be called again: not before the pause the dropped run's lane took after
 * the call (a lost answer's), 0 when none.
 *
 * A run is dropped while a lane's call may still be on its way (a post sent, its answer not yet
 * back). The call's effect is not recorded (the run that would record it is gone), so the next
 * run reads the post's in-flight mark from the last save and looks in the channel before posting
 * again. It must look only once the call has landed, or it finds nothing and posts a second card.
 *
 * A reload hands its run's calls to the run it builds at once. Every other way a run is dropped
 * (the breaker, a reload that cannot go on, a lease lost) leaves them here, keyed by the event,
 * for whichever run of the event this engine takes up next (acquire); each entry is forgotten
 * once all its calls have settled and their pauses are over. Each call is bounded by the Slack client's own timeout
 * (SLACK_CALL_TIMEOUT_MS), so every entry goes.
 */
export type Calls = ReadonlyMap<string, Promise<number>>;

/** Runs `forget` once `notBefore` (a call's pause) is over: at once when it is already. */
function whenOver(notBefore: number, forget: () => void): void {
  const left = notBefore - Date.now();
  if (left > 0) setTimeout(forget, left).unref();
  else forget();
}

/**
 * A run's own copy of the calls it inherited: each forgotten once settled and its pause over, so
 * that a run dropped later (perhaps before any lane of it started) hands on only what still
 * holds a channel back.
 */
export function untilOver(calls: Calls | undefined): Map<string, Promise<number>> {
  const mine = new Map(calls);
  for (const [ch, call] of mine) {
    void call.then((notBefore) =>
      whenOver(notBefore, () => {
        if (mine.get(ch) === call) mine.delete(ch);
      }),
    );
  }
  return mine;
}

export class CallsUnderWay {
  private readonly byEvent = new Map<string, Calls>();

  /**
   * Keeps `calls` for the event's next run here, with any still kept from before (a channel's
   * newer call replaces the older, which it waited for). True when any was given.
   */
  leave(event: string, calls: Calls): boolean {
    if (calls.size === 0) return false;
    const kept = new Map([...(this.byEvent.get(event) ?? []), ...calls]);
    this.byEvent.set(event, kept);
    void Promise.allSettled(kept.values()).then((all) => {
      // Kept on until the last pause is over too: a run taken up meanwhile still waits it out.
      const until = Math.max(0, ...all.map((r) => (r.status === "fulfilled" ? r.value : 0)));
      whenOver(until, () => {
        if (this.byEvent.get(event) === kept) this.byEvent.delete(event);
      });
    });
    return true;
  }

  /** Whether the event has calls kept here (its lease is then not given back: engine.ts). */
  has(event: string): boolean {
    return this.byEvent.has(event);
  }

  /** The event's calls kept here, handed over (and so no longer kept): the next run waits. */
  take(event: string): Calls | undefined {
    const calls = this.byEvent.get(event);
    this.byEvent.delete(event);
    return calls;
  }

  /** Every event's calls kept (shutdown waits for them, bounded). */
  byEventCalls(): Map<string, Promise<unknown>[]> {
    return new Map([...this.byEvent].map(([event, calls]) => [event, [...calls.values()]]));
  }

  get size(): number {
    return this.byEvent.size;
  }
}
