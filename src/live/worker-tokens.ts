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
    private readonly ask: (team: string) => Promise<string>,
    private readonly reuseMs = 1_000,
    private readonly now: () => number = Date.now,
  ) {}

  token(team: string): Promise<string> {
    const at = this.now();
    const hit = this.held.get(team);
    if (hit && at - hit.at < this.reuseMs) return hit.token;
    const token = this.ask(team);
    const entry = { at, token };
    this.held.set(team, entry);
    token.catch(() => {
      if (this.held.get(team) === entry) this.held.delete(team);
    });
    return token;
  }

  /** Forgets every workspace's token (the thread is stopping). */
  clear(): void {
    this.held.clear();
  }
}
