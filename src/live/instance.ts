import type { EventState } from "../upstream/events/schemas.ts";

/** One instance of an event as the live engine holds it (state.ts applies messages to it). */

export type StaffRole = "panelist" | "moderator";

export interface InstanceLive {
  readonly id: string;
  /** Undefined until a state message arrives. */
  state: EventState | undefined;
  present: number;
  peak: number;
  /** Distinct endpointGuids seen. */
  unique: number;
  /** Sessions seen (a JOIN, or a LEFT whose JOIN never came). */
  joins: number;
  leaves: number;
  /** endpointGuid → flat [joinTime, leaveTime (0 = still in), …]. */
  readonly sessions: Map<string, number[]>;
  /** Staff matched by e-mail, by endpointGuid. */
  readonly staff: Map<string, { role: StaffRole; name: string }>;
  /** Who each endpoint is, as last told (the attendance report's CSV), by endpointGuid. */
  readonly people: Map<string, Person>;
  /** State changes as they arrived ([state, epoch ms]); "ENDED" when the instance ended. */
  readonly marks: Array<[string, number]>;
  /** When the instance ended, as recorded here (domain/instance-end.ts says what "ends" means). */
  endedAt: number | undefined;
  /** The last message applied to this instance (epoch ms of arrival). */
  lastAt: number;
}

export interface Person {
  name: string;
  email?: string;
  endpointType: string;
}
