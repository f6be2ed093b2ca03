import type { Deps } from "../deps.ts";
import type { Event } from "../upstream/events/schemas.ts";
import { withUserToken } from "./access.ts";
import { actorName, audit } from "./audit.ts";
import type { Actor } from "./directory.ts";
import {
  diffEvent,
  type EventDraft,
  type EventPatchPeople,
  PEOPLE_PICKER_MAX,
  valuesFromEvent,
} from "./event-draft.ts";
import { loadManaged, onEventEdited } from "./event-lifecycle.ts";
import { afterChange, patchRecord, timesOf } from "./event-record.ts";
import { emailsOf, emailsToSlackUsers, slackUsersToPeople } from "./people.ts";
import { isTooLong, userText } from "./text.ts";

/** What the edit form starts with: the event as the service has it now. */
export interface EditStart {
  event: Event;
  draft: EventDraft;
  /** People fields too long to edit in a picker (their counts). */
  tooManyPeople: { panelists?: number; moderators?: number };
  /** Which people pickers the form shows (kept in the form, sent back on save). */
  people: { panelists: boolean; moderators: boolean };
  /** The title is longer than the form takes. */
  longTitle: boolean;
}

export async function startEditing(deps: Deps, actor: Actor, eventId: string): Promise<EditStart> {
  const { event } = await loadManaged(deps, actor, eventId);
  const draft = valuesFromEvent(event);
  const tooManyPeople: EditStart["tooManyPeople"] = {};
  const people = { panelists: true, moderators: true };
  for (const k of ["panelists", "moderators"] as const) {
    const emails = emailsOf(event[k]);
    if (emails.length > PEOPLE_PICKER_MAX) {
      tooManyPeople[k] = emails.length;
      people[k] = false;
    } else {
      draft[k] = (await emailsToSlackUsers(actor.directory, emails)).users;
    }
  }
  return { event, draft, tooManyPeople, people, longTitle: isTooLong(event.title, 200) };
}

export type EditOutcome =
  | { changed: []; event: Event }
  | {
      changed: string[];
      event: Event;
      /** Slack users who could not be invited (no e-mail on their profile). */
      missing: string[];
      /** The channel cards could not be refreshed (they show the old details for now). */
      stale: boolean;
      /** The event's organizer (Slack user): only they may see its links and passcodes. */
      organizer: string;
    };

/** Sends only what changed, as the organizer; cards and reminders follow; audited. */
export async function saveEdit(
  deps: Deps,
  actor: Actor,
  eventId: string,
  draft: EventDraft,
  shown: { panelists: boolean; moderators: boolean } | undefined,
): Promise<EditOutcome> {
  const { record, link, event: before } = await loadManaged(deps, actor, eventId);
  const people: EventPatchPeople = {};
  const missing: string[] = [];
  for (const k of ["panelists", "moderators"] as const) {
    if (shown?.[k] === false || draft[k] === undefined) continue;
    const mapped = await slackUsersToPeople(actor.directory, draft[k]);
    missing.push(...mapped.missing);
    // Addresses the picker could not show (no Slack user) are kept, not dropped by the edit.
    const kept = new Set(mapped.people.map((p) => p.email));
    const hidden = emailsOf(before[k]).filter((e) => !kept.has(e));
    const unknown = (await emailsToSlackUsers(actor.directory, hidden)).unknown;
    people[k] = [...mapped.people, ...unknown.map((email) => ({ email }))];
  }
  const patch = diffEvent(before, draft, people);
  const changed = Object.keys(patch);
  if (changed.length === 0) return { changed: [], event: before };
  const after = await withUserToken(deps, actor.team, link, async (t) => {
    await deps.events.editEvent(t.accessToken, t.userId, record.eventId, patch);
    return deps.events.getEvent(t.accessToken, t.userId, record.eventId);
  });
  await patchRecord(deps, actor.team, record.eventId, timesOf(after));
  const stale = await afterChange(deps, "edit follow-up", () =>
    onEventEdited(deps, actor.team, record.eventId),
  );
  await audit(
    deps,
    actor.team,
    {
      actor: actor.user,
      action: "event.edit",
      target: record.eventId,
      details: { fields: changed.join(",") },
    },
    `${await actorName(actor)} edited *${userText(after.title, 200)}* (\`${userText(record.eventId, 80)}\`): ${changed.join(", ")}.`,
  );
  return {
    changed,
    event: after,
    missing,
    stale: stale !== undefined,
    organizer: record.organizer,
  };
}
