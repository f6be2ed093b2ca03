import { randomBytes } from "node:crypto";
import type { Deps } from "../deps.ts";
import { USER_ERROR_CODES, UserFacingError, withUserToken } from "../slack/access.ts";
import {
  type EventRecord,
  hashWebhookSecret,
  type NoiseLevel,
  type Subscription,
  type UserLink,
} from "../store/index.ts";
import { EventsError } from "../upstream/errors.ts";
import { type Event, WEBHOOK_TYPES } from "../upstream/events/schemas.ts";
import { withEventLock } from "./lock.ts";
import {
  asLiveSub,
  DEFAULT_NOISE,
  DEFAULT_REMINDERS_MIN,
  type LiveSubscription,
  publicEvent,
} from "./records.ts";
import { cancelReminders, scheduleReminders } from "./reminders.ts";
import { liveWorker } from "./runtime.ts";
import { forgetSubscription, WEBHOOK_SECRET_HEADER } from "./webhook.ts";
import { refreshMessage } from "./worker.ts";

/**
 * The live area's lifecycle, called by the organizer workflows (schedule, edit, cancel) and by
 * `/onair notify` / `/onair mute`.
 *
 * One subscription per event: one upstream webhook configuration for both types, at
 * PUBLIC_URL/webhooks/events/<subscriptionId>, with a fresh random secret in a header. Channels
 * are fanned out internally. The secret is never stored (only its SHA-256), so adding a channel
 * leaves the upstream configuration alone; muting the last channel removes both types upstream
 * and deletes the subscription, and a later notify starts over with a new id and secret.
 */

export interface SubscribeArgs {
  team: string;
  eventId: string;
  channel: string;
  /** The Slack user asking; the organizer's link is used upstream. */
  user: string;
  noise?: NoiseLevel;
  /** Minutes before the start; default [60, 10]. */
  remindersMin?: number[];
}

function notFound(eventId: string): UserFacingError {
  return new UserFacingError(
    USER_ERROR_CODES.notFound,
    `On Air doesn't know the event \`${eventId.slice(0, 80)}\`. Run \`/onair list\` to see the events you can use.`,
  );
}

async function organizerLink(deps: Deps, record: EventRecord): Promise<UserLink> {
  const link = await deps.store.users.get(record.team, record.organizer);
  if (!link) {
    throw new UserFacingError(
      USER_ERROR_CODES.notLinked,
      `The organizer of this event, <@${record.organizer}>, isn't linked to the events service any more. They can run \`/onair link\` and try again.`,
    );
  }
  return link;
}

async function fetchEvent(deps: Deps, record: EventRecord, link: UserLink): Promise<Event> {
  return withUserToken(deps, record.team, link, (t) =>
    deps.events.getEvent(t.accessToken, t.userId, record.eventId),
  );
}

/** The event's live subscription, when it has one. */
export async function subscriptionOf(
  deps: Deps,
  record: EventRecord,
): Promise<{ id: string; sub: LiveSubscription } | undefined> {
  for (const id of [...record.subscriptions].reverse()) {
    const sub = await deps.store.subscriptions.get(id);
    if (sub && sub.team === record.team && sub.eventId === record.eventId) {
      return { id, sub: asLiveSub(sub) };
    }
  }
  return undefined;
}

async function putSub(deps: Deps, id: string, sub: LiveSubscription): Promise<void> {
  await deps.store.subscriptions.put(id, sub);
  forgetSubscription(deps, id);
}

/** Has the event's owner (any process) look at it again: cards are re-rendered and posted. */
async function refresh(deps: Deps, team: string, eventId: string, subId: string): Promise<void> {
  await deps.store.outbox.put({
    team,
    subscriptionId: subId,
    eventId,
    receivedAt: deps.now(),
    message: refreshMessage(),
  });
  liveWorker(deps)?.nudge();
}

function webhookUrl(deps: Deps, subId: string): string {
  return `${deps.config.publicUrl.replace(/\/+$/, "")}/webhooks/events/${subId}`;
}

async function removeUpstream(deps: Deps, record: EventRecord): Promise<void> {
  let link: UserLink;
  try {
    link = await organizerLink(deps, record);
  } catch (err) {
    deps.logger.warn({ err }, "live: webhook not removed upstream (organizer not linked)");
    return;
  }
  await withUserToken(deps, record.team, link, async (t) => {
    for (const type of WEBHOOK_TYPES) {
      try {
        await deps.events.removeWebhook(t.accessToken, t.userId, record.eventId, type);
      } catch (err) {
        // Gone already (the event was deleted first, or removed before): the aim holds.
        if (err instanceof EventsError && err.status === 404) continue;
        throw err;
      }
    }
  });
}

/**
 * Joins a public channel the bot is not in yet. Posting works without it (chat:write.public),
 * but only a member may read the channel back, and that is how a restarted worker finds a post
 * whose answer was lost instead of posting it twice (recover.ts). Best effort: a private channel
 * (the bot must be invited), a workspace that forbids it, or an install without the scope leave
 * the channel as it was.
 */
async function joinChannel(deps: Deps, team: string, channel: string): Promise<void> {
  try {
    const client = await deps.bulkClient(team);
    await client.conversations.join({ channel });
  } catch (err) {
    const e = err as { code?: string; data?: { error?: string } };
    deps.logger.info(
      { channel, error: e.data?.error ?? e.code },
      "live: not joining the channel; posting there without membership",
    );
  }
}

/** Registers the event's webhook upstream (once per event), posts the card, schedules reminders. */
export async function subscribeChannel(deps: Deps, args: SubscribeArgs): Promise<void> {
  await withEventLock(deps, args.team, args.eventId, () => subscribeLocked(deps, args));
}

async function subscribeLocked(deps: Deps, args: SubscribeArgs): Promise<void> {
  const record = await deps.store.events.get(args.team, args.eventId);
  if (!record) throw notFound(args.eventId);
  if (record.cancelled) {
    throw new UserFacingError(
      USER_ERROR_CODES.invalid,
      "That event is cancelled, so there is nothing to notify. Schedule a new one with `/onair schedule`.",
    );
  }
  const link = await organizerLink(deps, record);
  const event = await fetchEvent(deps, record, link);
  await joinChannel(deps, args.team, args.channel);
  const existing = await subscriptionOf(deps, record);
  const noise = args.noise ?? existing?.sub.channelNoise?.[args.channel] ?? DEFAULT_NOISE;
  let subId: string;
  let sub: LiveSubscription;
  if (existing && !existing.sub.cancelled) {
    subId = existing.id;
    sub = {
      ...existing.sub,
      channels: existing.sub.channels.includes(args.channel)
        ? existing.sub.channels
        : [...existing.sub.channels, args.channel],
      channelNoise: { ...existing.sub.channelNoise, [args.channel]: noise },
      event: publicEvent(event),
    };
    await putSub(deps, subId, sub);
  } else {
    subId = randomBytes(18).toString("base64url");
    const secret = randomBytes(32).toString("base64url");
    sub = {
      team: args.team,
      eventId: args.eventId,
      channels: [args.channel],
      secretSha256: hashWebhookSecret(secret),
      types: [...WEBHOOK_TYPES],
      noise,
      channelNoise: { [args.channel]: noise },
      event: publicEvent(event),
      createdBy: args.user,
      createdAt: deps.now(),
    } satisfies Subscription & LiveSubscription;
    // Stored first: a message delivered right after registration must find it.
    await putSub(deps, subId, sub);
    try {
      await withUserToken(deps, args.team, link, (t) =>
        deps.events.registerWebhook(t.accessToken, t.userId, args.eventId, {
          type: WEBHOOK_TYPES,
          method: "POST",
          headers: { [WEBHOOK_SECRET_HEADER]: secret },
          url: webhookUrl(deps, subId),
        }),
      );
    } catch (err) {
      await deps.store.subscriptions.delete(subId);
      forgetSubscription(deps, subId);
      throw err;
    }
    const fresh = (await deps.store.events.get(args.team, args.eventId)) ?? record;
    await deps.store.events.put({
      ...fresh,
      subscriptions: [...fresh.subscriptions.filter((s) => s !== subId), subId],
      updatedAt: deps.now(),
    });
  }
  const mins = args.remindersMin ?? [...DEFAULT_REMINDERS_MIN];
  const old = sub.reminders?.[args.channel];
  if (old) await cancelReminders(deps, args.team, args.channel, old.scheduled);
  const scheduled = await scheduleReminders(deps, args.team, args.channel, event, mins);
  sub = { ...sub, reminders: { ...sub.reminders, [args.channel]: { mins, scheduled } } };
  await putSub(deps, subId, sub);
  await refresh(deps, args.team, args.eventId, subId);
}

/** Refreshes the event's cards and moves its reminders. */
export async function onEventEdited(deps: Deps, team: string, eventId: string): Promise<void> {
  await withEventLock(deps, team, eventId, () => editedLocked(deps, team, eventId));
}

async function editedLocked(deps: Deps, team: string, eventId: string): Promise<void> {
  const record = await deps.store.events.get(team, eventId);
  if (!record) return;
  const found = await subscriptionOf(deps, record);
  if (!found || found.sub.cancelled) return;
  const event = await fetchEvent(deps, record, await organizerLink(deps, record));
  const before = asLiveSub(found.sub);
  const reminders: NonNullable<LiveSubscription["reminders"]> = {};
  for (const ch of before.channels) {
    const r = before.reminders?.[ch];
    if (!r) continue;
    await cancelReminders(deps, team, ch, r.scheduled);
    reminders[ch] = {
      mins: r.mins,
      scheduled: await scheduleReminders(deps, team, ch, event, r.mins),
    };
  }
  await putSub(deps, found.id, { ...before, event: publicEvent(event), reminders });
  await refresh(deps, team, eventId, found.id);
}

/** Removes the webhook upstream (per type), deletes reminders, marks the cards cancelled. */
export async function onEventCancelled(deps: Deps, team: string, eventId: string): Promise<void> {
  await withEventLock(deps, team, eventId, () => cancelledLocked(deps, team, eventId));
}

async function cancelledLocked(deps: Deps, team: string, eventId: string): Promise<void> {
  const record = await deps.store.events.get(team, eventId);
  if (!record) return;
  const found = await subscriptionOf(deps, record);
  if (!found) return;
  await removeUpstream(deps, record);
  for (const [ch, r] of Object.entries(found.sub.reminders ?? {})) {
    await cancelReminders(deps, team, ch, r.scheduled);
  }
  // Kept, marked: the route refuses its webhooks and the owner re-renders every card cancelled.
  await putSub(deps, found.id, { ...found.sub, cancelled: true, reminders: {} });
  await refresh(deps, team, eventId, found.id);
}

/**
 * Stops live notices for the event in one channel. When no channel is left, both webhook types
 * are removed upstream and the subscription is deleted. False when the channel was not notified.
 */
export async function muteChannel(
  deps: Deps,
  team: string,
  eventId: string,
  channel: string,
): Promise<boolean> {
  return withEventLock(deps, team, eventId, () => muteLocked(deps, team, eventId, channel));
}

async function muteLocked(
  deps: Deps,
  team: string,
  eventId: string,
  channel: string,
): Promise<boolean> {
  const record = await deps.store.events.get(team, eventId);
  if (!record) throw notFound(eventId);
  const found = await subscriptionOf(deps, record);
  if (!found?.sub.channels.includes(channel)) return false;
  const r = found.sub.reminders?.[channel];
  if (r) await cancelReminders(deps, team, channel, r.scheduled);
  const channels = found.sub.channels.filter((c) => c !== channel);
  if (channels.length === 0) {
    await removeUpstream(deps, record);
    await deps.store.subscriptions.delete(found.id);
    forgetSubscription(deps, found.id);
    const fresh = (await deps.store.events.get(team, eventId)) ?? record;
    await deps.store.events.put({
      ...fresh,
      subscriptions: fresh.subscriptions.filter((s) => s !== found.id),
      updatedAt: deps.now(),
    });
    liveWorker(deps)?.nudge();
    return true;
  }
  const { [channel]: _gone, ...reminders } = found.sub.reminders ?? {};
  const { [channel]: _noise, ...channelNoise } = found.sub.channelNoise ?? {};
  await putSub(deps, found.id, { ...found.sub, channels, reminders, channelNoise });
  await refresh(deps, team, eventId, found.id);
  return true;
}
