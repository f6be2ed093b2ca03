import type { Deps } from "../../deps.ts";
import {
  onEventCancelled,
  onEventEdited,
  type SubscribeArgs,
  subscribeChannel,
} from "../../live/lifecycle.ts";

/**
 * The live area's lifecycle hooks (src/live/lifecycle.ts): webhooks, cards and reminders. Kept
 * behind one seam so the organizer flows name the contract in one place.
 */
export interface LiveLifecycle {
  subscribeChannel(deps: Deps, args: SubscribeArgs): Promise<void>;
  onEventEdited(deps: Deps, team: string, eventId: string): Promise<void>;
  onEventCancelled(deps: Deps, team: string, eventId: string): Promise<void>;
}

export const live: LiveLifecycle = { subscribeChannel, onEventEdited, onEventCancelled };
