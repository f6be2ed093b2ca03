import type { Deps } from "../deps.ts";
import type { EventRecord } from "../store/index.ts";
import type { Event } from "../upstream/events/schemas.ts";
import { effectiveSettings, requireAllowed, requireLinked, withUserToken } from "./access.ts";
import { actorName, audit } from "./audit.ts";
import type { Actor } from "./directory.ts";
import { DEFAULT_REMINDERS, type EventDraft, TITLE_MAX, toEventInput } from "./event-draft.ts";
import { afterChange, timesOf } from "./event-record.ts";
import { requireLiveChannel } from "./notify.ts";
import { slackUsersToPeople } from "./people.ts";
import { readScheduleText } from "./schedule-text.ts";
import { subscribeChannel } from "./subscriptions.ts";
import { userText } from "./text.ts";
import { DEFAULT_ZONE, knownZone } from "./zones.ts";

const HOUR = 3_600_000;

/**
 * What a fresh schedule form starts with, after checking the actor may schedule at all. `text`
 * is what was typed after `/onair schedule`: a day and time at its front and a title after them
 * fill those fields (see schedule-text.ts).
 */
export async function startScheduling(deps: Deps, actor: Actor, text = ""): Promise<EventDraft> {
  const settings = await effectiveSettings(deps, actor.team);
  await requireAllowed(actor, settings, "schedule");
  const profile = await actor.directory.profile(actor.user);
  await requireLinked(deps, actor);
  const zone = knownZone(profile.tz) ? profile.tz : DEFAULT_ZONE;
  // Next full hour, one hour long: a sensible start the organizer adjusts.
  const next = Math.ceil((deps.now() + HOUR / 2) / HOUR) * HOUR;
  const typed = readScheduleText(text, zone, deps.now(), next);
  const start = typed.start ?? next;
  return {
    ...(typed.title ? { title: typed.title.slice(0, TITLE_MAX * 2) } : {}),
    timezone: zone,
    start,
    end: start + HOUR,
    recurrence: "NONE",
    frequency: 1,
    reminders: [...DEFAULT_REMINDERS],
  };
}

export interface Scheduled {
  event: Event;
  /** Slack users who could not be invited (no e-mail on their profile). */
  missing: string[];
  /** The channel asked for in the form, and why it got no card when it did not. */
  channel?: { id: string; failed?: unknown };
}

/** Creates the event upstream (as the actor), records it, subscribes the form's channel, audits. */
export async function scheduleEvent(
  deps: Deps,
  actor: Actor,
  draft: EventDraft,
  fromChannel?: string,
): Promise<Scheduled> {
  const { team, user } = actor;
  const settings = await effectiveSettings(deps, team);
  await requireAllowed(actor, settings, "schedule");
  // The form's channel gets the live card: the same rule as /onair notify, before anything
  // is created upstream.
  if (draft.channel) await requireLiveChannel(actor, draft.channel, fromChannel);
  const link = await requireLinked(deps, actor);
  const [panelists, moderators] = await Promise.all([
    slackUsersToPeople(actor.directory, draft.panelists ?? []),
    slackUsersToPeople(actor.directory, draft.moderators ?? []),
  ]);
  const body = toEventInput(
    draft,
    { panelists: panelists.people, moderators: moderators.people },
    DEFAULT_ZONE,
  );
  const event: Event = await withUserToken(deps, team, link, async (t) => {
    const { id } = await deps.events.createEvent(t.accessToken, t.userId, body);
    return deps.events.getEvent(t.accessToken, t.userId, id);
  });
  const record: EventRecord = {
    team,
    eventId: event.id,
    organizer: user,
    upstreamUserId: link.userId,
    ...timesOf(event),
    subscriptions: [],
    cards: {},
    instances: {},
    createdAt: deps.now(),
  };
  const out: Scheduled = { event, missing: [...panelists.missing, ...moderators.missing] };
  // With a channel, subscribing writes the record once, with its subscription, and reuses the
  // event just GOT; should it fail before that write, the record is written here.
  const loaded = { record, event, link, stored: false };
  if (draft.channel) {
    const channel = draft.channel;
    const failed = await afterChange(deps, "subscribe", () =>
      subscribeChannel(deps, {
        team,
        eventId: event.id,
        channel,
        user,
        remindersMin: draft.reminders ?? [...DEFAULT_REMINDERS],
        ...(draft.noise ? { noise: draft.noise } : {}),
        loaded,
      }),
    );
    out.channel = failed ? { id: channel, failed } : { id: channel };
  }
  if (!loaded.stored) await deps.store.events.put(record);
  await audit(
    deps,
    team,
    {
      actor: user,
      action: "event.schedule",
      target: event.id,
      details: {
        title: event.title.slice(0, 200),
        start: event.start,
        channel: draft.channel ?? null,
      },
    },
    `${await actorName(actor)} scheduled *${userText(event.title, 200)}* (\`${userText(event.id, 80)}\`).`,
  );
  return out;
}
