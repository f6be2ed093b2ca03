import type { WebClient } from "@slack/web-api";
import type { Config } from "./config.ts";
import type { LivePort } from "./live-port.ts";
import type { Logger } from "./log.ts";
import type { Metrics } from "./metrics.ts";
import type { Store } from "./store/index.ts";
import type { AppCredentials, EventsClient } from "./upstream/events/client.ts";
import type { TokenManager } from "./upstream/events/tokens.ts";
import type { BasicCredentials, RelayClient } from "./upstream/relay/client.ts";

/**
 * What every listener, domain action and the live engine may use, handed in by closure
 * (`register(app, deps)`), never imported as a global. Built once by the composition root
 * (src/app.ts).
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
  /** Upstream credentials used where a workspace has saved none (the sandbox's seeded ones). */
  readonly defaultCredentials: { events: AppCredentials; relay: BasicCredentials } | undefined;
  readonly now: () => number;
  /** Where the events service delivers a subscription's webhooks. */
  webhookUrl(subscriptionId: string): string;
  /**
   * A Web API client for bulk posting (live cards, digests, reminders, audit lines) to one team.
   * It never shares a queue or a rate-limit pause with the interactive client Bolt hands to
   * listeners, so a 429 on a busy channel cannot make a modal miss its trigger. It does not
   * retry 429s itself: its callers pace and retry.
   */
  bulkClient(teamId: string): Promise<WebClient>;
  /** The live engine, as the domain sees it. */
  readonly live: LivePort;
  /** Where background work (posting, reminders) registers its own shutdown. */
  onClose(fn: () => Promise<void> | void): void;
}
