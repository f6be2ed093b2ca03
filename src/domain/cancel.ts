import type { Deps } from "../deps.ts";
import { EventsError } from "../upstream/errors.ts";
import type { Event } from "../upstream/events/schemas.ts";
import { withUserToken } from "./access.ts";
import { actorName, audit } from "./audit.ts";
import type { Actor } from "./directory.ts";
import { loadManaged, markGone, onEventCancelled } from "./event-lifecycle.ts";
import {
  afterChange,
  goneEvent,
  manageableRecord,
  organizerLink,
  patchRecord,
} from "./event-record.ts";
import { userText } from "./text.ts";

/** The event a cancel confirmation shows, for an actor who may cancel it. */
export async function startCancelling(deps: Deps, actor: Actor, eventId: string): Promise<Event> {
  return (await loadManaged(deps, actor, eventId)).event;
}

export interface Cancelled {
  title: string;
  /** Why the channel cards and reminders could not all be cleaned up, when they could not. */
  cleanupFailed?: unknown;
}

/** DELETE upstream (as the organizer), then webhooks, reminders and cards; audited. */
export async function cancelEvent(deps: Deps, actor: Actor, eventId: string): Promise<Cancelled> {
  const record = await manageableRecord(deps, actor, eventId);
  const link = await organizerLink(deps, record, actor);
  const outcome = await withUserToken(deps, actor.team, link, async (t) => {
    try {
      await deps.events.deleteEvent(t.accessToken, t.userId, record.eventId);
    } catch (err) {
      if (!(err instanceof EventsError && err.status === 404)) throw err;
      // Deleted outside On Air: gone, not cancelled here, and the organizer is told so.
      return "gone" as const;
    }
    return "deleted" as const;
  });
  if (outcome === "gone") {
    await markGone(deps, actor.team, record.eventId);
    throw goneEvent(record.title);
  }
  await patchRecord(deps, actor.team, record.eventId, { cancelled: true });
  const failed = await afterChange(deps, "cancel follow-up", () =>
    onEventCancelled(deps, actor.team, record.eventId),
  );
  const title = (record.title ?? record.eventId).slice(0, 200);
  await audit(
    deps,
    actor.team,
    { actor: actor.user, action: "event.cancel", target: record.eventId, details: { title } },
    `${await actorName(actor)} cancelled *${userText(title, 200)}* (\`${userText(record.eventId, 80)}\`).`,
  );
  return failed === undefined ? { title } : { title, cleanupFailed: failed };
}
