import type { WebClient } from "@slack/web-api";
import type { Config } from "./config.ts";
import type { Logger } from "./log.ts";
import type { Metrics } from "./metrics.ts";
import type { Store } from "./store/index.ts";
import type { EventsClient } from "./upstream/events/client.ts";
import type { TokenManager } from "./upstream/events/tokens.ts";
import type { RelayClient } from "./upstream/relay/client.ts";

/**
 * What every listener and domain action may use, handed in by closure (`register(app, deps)`),
 * never imported as a global.
 */
export interface Deps {
  /** publicUrl resolved: with PORT=0 it names the port actually bound. */
  readonly config: Config;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly store: Store;
  readonly relay: RelayClient;
  readonly events: EventsClient;
  readonly tokens: TokenManager;
  /** True when the upstream services are the embedded sandbox. */
  readonly sandboxed: boolean;
  readonly now: () => number;
  /**
   * A Web API client for bulk posting (live cards, digests, reminders) to one team. It never shares
   * a queue or a rate-limit pause with the interactive client Bolt hands to listeners, so a 429
   * on a busy channel cannot make a modal miss its trigger. It does not retry 429s itself:
   * the outbox paces and retries.
   */
  bulkClient(teamId: string): Promise<WebClient>;
  /** Where background work (posting, reminders) registers its own shutdown. */
  onClose(fn: () => Promise<void> | void): void;
}
