/**
 * What the domain asks of the live engine (src/live), which implements it; the composition root
 * hands it in through Deps. Domain code never imports the engine.
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
