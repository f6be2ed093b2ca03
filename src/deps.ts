import type { WebClient } from "@slack/web-api";
import type { Config } from "./config.ts";
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

/**
 * The live engine as the domain sees it (Deps.live): what the domain asks of src/live, which
 * implements it. Domain code never imports the engine; these shapes sit here, beside Deps, so
 * neither src/domain nor src/live owns what both of them speak.
 */

export interface AttendanceFigures {
  instanceId: string;
  state: string | undefined;
  peak: number;
  unique: number;
  present: number;
  /** Average minutes attended per unique attendee so far (up to the end, once ended). */
  averageMinutes: number;
  /**
   * When the instance ended (domain/instance-end.ts decides), if it has: every surface that
   * shows a state says "Ended" then, never "Live now".
   */
  endedAt?: number;
}

/** One attendee (one endpointGuid) and their sessions, flat [join, leave (0 = still in), …]. */
export interface AttendeeSessions {
  name: string;
  email?: string;
  endpointType: string;
  sessions: readonly number[];
}

export interface InstanceSnapshot {
  instanceId: string;
  state: string | undefined;
  /** State changes as they arrived: [state, epoch ms]; "ENDED" marks the end. */
  marks: ReadonlyArray<readonly [string, number]>;
  endedAt: number | undefined;
  attendees: AttendeeSessions[];
  /** The event's zone (the organizer's choice): the chart's times are drawn in it. */
  zone?: string;
}

export interface LivePort {
  /** Something was stored in the outbox: look soon rather than at the next poll. */
  nudge(): void;
  /** A subscription changed: this process stops using its cached copy at once. */
  forgetSubscription(id: string): void;
  /** The current instance's figures, freshest available (the owner's memory, else the store). */
  figures(team: string, eventId: string): Promise<AttendanceFigures | undefined>;
  /** The current instance's sessions and who they are (the attendance report), freshest available. */
  snapshot(team: string, eventId: string): Promise<InstanceSnapshot | undefined>;
  /**
   * Posts one line to a channel (the audit channel) on the channel's shared pace, waiting out
   * any Retry-After; resolves once it is posted, or gives up (logged) when Slack refuses it.
   */
  announce(team: string, channel: string, text: string): Promise<void>;
}
