/**
 * The live engine's one back-off policy: a wait that doubles with each failure in a row, from `firstMs`
 * up to `maxMs`. Retry-After, when Slack or a service gives one, takes precedence wherever it
 * is read; this is for the failures that say nothing about when to come back.
 */
export interface Backoff {
  readonly firstMs: number;
  readonly maxMs: number;
}

/** The wait before try number `failures + 1`, after `failures` failures in a row (0: the first). */
export function backoffMs(policy: Backoff, failures: number): number {
  return Math.min(policy.maxMs, policy.firstMs * 2 ** Math.min(Math.max(0, failures), 30));
}
