/**
 * The engine's worker keeps the bot token the main thread gave it for a workspace, for a
 * moment, so posting does not cost a worker → main round trip per post. The main thread stays
 * the one place tokens come from (it refreshes rotating ones ahead of their expiry, and knows
 * an uninstall): a token is reused for at most `reuseMs`, so a refreshed or revoked one is seen
 * within that time, and a failed answer (no installation, the store's trouble) is never kept.
 * Asks for one workspace in flight at the same time share one answer.
 */
export class WorkerTokens {
  private readonly held = new Map<string, { at: number; token: Promise<string> }>();

  constructor(
    /** Asks the main thread; `given up` is aborted when the answer is no longer awaited. */
    private readonly ask: (team: string, givenUp: AbortSignal) => Promise<string>,
    private readonly reuseMs = 1_000,
    private readonly now: () => number = Date.now,
    /**
     * How long an ask may go unanswered (the main thread refreshing a rotating token takes a
     * round trip to Slack, with retries). Past it the ask fails like any other, so a lane whose
     * answer was lost (a thread restarting, a message dropped) tries again after its pause
     * rather than waiting for good with its channel silent.
     */
    private readonly askTimeoutMs = 30_000,
  ) {}

  token(team: string): Promise<string> {
    const at = this.now();
    const hit = this.held.get(team);
    if (hit && at - hit.at < this.reuseMs) return hit.token;
    const token = this.askWithin(team);
    const entry = { at, token };
    this.held.set(team, entry);
    token.catch(() => {
      if (this.held.get(team) === entry) this.held.delete(team);
    });
    return token;
  }

  private askWithin(team: string): Promise<string> {
    const givenUp = new AbortController();
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        givenUp.abort();
        reject(
          new Error(`no token for ${team} from the main thread within ${this.askTimeoutMs} ms`),
        );
      }, this.askTimeoutMs);
      timer.unref?.();
      this.ask(team, givenUp.signal).then(
        (t) => {
          clearTimeout(timer);
          resolve(t);
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(err);
        },
      );
    });
  }

  /** Forgets every workspace's token (the thread is stopping). */
  clear(): void {
    this.held.clear();
  }
}
