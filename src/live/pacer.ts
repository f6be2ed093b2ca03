import type { WebClient } from "@slack/web-api";
import type { Logger } from "../log.ts";
import { retryAfterMs } from "../slack-errors.ts";
import type { Store } from "../store/index.ts";

/**
 * Slack's pace for messages is about one a second per channel, whatever posts them. The pacer
 * hands out that allowance per workspace and channel: every event posting to the channel, in
 * this process and (on Redis or Postgres, where the store is shared) in every other instance,
 * takes its turn from the same key. A 429's Retry-After holds the channel for everyone.
 *
 * One call per `paceMs` is a token bucket of one token: the store's claim (`SET NX PX` on Redis)
 * is the token, and its expiry the refill. Within a process waiters queue in order, so two
 * events in one channel alternate instead of one starving the other.
 */

export interface PacerOptions {
  /** One call per this, per channel. Default 1,000 ms. */
  paceMs?: number;
  /** How often a waiter looks again while another instance holds the turn. Default 100 ms. */
  pollMs?: number;
}

export class ChannelPacer {
  private readonly paceMs: number;
  private readonly pollMs: number;
  /** Per channel key: the promise the next local waiter queues behind. */
  private readonly tails = new Map<string, Promise<void>>();

  constructor(
    private readonly store: Store,
    options: PacerOptions = {},
  ) {
    this.paceMs = options.paceMs ?? 1_000;
    this.pollMs = options.pollMs ?? Math.min(100, this.paceMs);
  }

  private key(team: string, channel: string): string {
    return `pace:${team}:${channel}`;
  }

  /**
   * Resolves when the caller may make one call to the channel, or with false when `cancelled`
   * turned true while it waited (the caller then makes no call).
   */
  async acquire(team: string, channel: string, cancelled: () => boolean): Promise<boolean> {
    const key = this.key(team, channel);
    const before = this.tails.get(key) ?? Promise.resolve();
    let done!: () => void;
    const mine = new Promise<void>((resolve) => {
      done = resolve;
    });
    const tail = before.then(() => mine);
    this.tails.set(key, tail);
    try {
      await before;
      for (;;) {
        if (cancelled()) return false;
        if (await this.store.claimOnce(key, this.paceMs)) return true;
        await new Promise((r) => setTimeout(r, this.pollMs).unref());
      }
    } finally {
      done();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** Slack asked the channel to slow down: nobody calls it for `ms`. */
  async hold(team: string, channel: string, ms: number): Promise<void> {
    await this.store.set(this.key(team, channel), true, ms);
  }
}

/** How often a throttled announcement is tried before it is given up (each after Retry-After). */
const ANNOUNCE_TRIES = 5;

/** One line posted to a channel at its turn from the pacer; a 429 holds the channel. */
export async function announceLine(
  deps: {
    pacer: ChannelPacer;
    bulkClient(team: string): Promise<WebClient>;
    logger: Logger;
    stopped(): boolean;
  },
  team: string,
  channel: string,
  text: string,
): Promise<void> {
  const { pacer, logger } = deps;
  for (let attempt = 1; attempt <= ANNOUNCE_TRIES && !deps.stopped(); attempt++) {
    try {
      if (!(await pacer.acquire(team, channel, deps.stopped))) return;
      const client = await deps.bulkClient(team);
      await client.chat.postMessage({ channel, text, unfurl_links: false, unfurl_media: false });
      return;
    } catch (err) {
      const wait = retryAfterMs(err);
      if (wait === undefined) {
        logger.warn({ err, channel }, "live: a line for the channel was not posted");
        return;
      }
      await pacer.hold(team, channel, wait).catch(() => undefined);
    }
  }
  logger.warn({ channel }, "live: a line for the channel was not posted (still throttled)");
}
