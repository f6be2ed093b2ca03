import { randomBytes } from "node:crypto";
import type { Deps } from "../deps.ts";
import { slackErrorName } from "../slack-errors.ts";
import {
  type EventRecord,
  hashWebhookSecret,
  type NoiseLevel,
  type Subscription,
  type UserLink,
} from "../store/index.ts";
import { EventsError } from "../upstream/errors.ts";
import { type Event, WEBHOOK_TYPES } from "../upstream/events/schemas.ts";
import { withUserToken } from "./access.ts";
import { withEventLock } from "./event-lock.ts";
import { cancelledEvent, organizerLink, unknownEvent } from "./event-record.ts";
import {
  asLiveSub,
  DEFAULT_NOISE,
  DEFAULT_REMINDERS_MIN,
  type LiveSubscription,
  publicEvent,
  refreshMessage,
  WEBHOOK_SECRET_HEADER,
} from "./subscription.ts";

/**
 * An event's live subscription: notify (subscribe a channel) and mute (one channel off; the last
 * one removes the webhooks). What an edit, a cancel or the event going away does to it is
 * event-lifecycle.ts's, which calls the helpers exported here.
 *
 * One subscription per event: one upstream webhook configuration for both types, at the URL the
 * composition root builds (`deps.webhookUrl`), with a fresh random secret in a header. Channels
 * are fanned out internally. Every change runs under the event's lock and ends by asking the live
 * engine to look at the event again (a `refresh` item in the outbox).
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
  /**
   * What the caller already loaded (a schedule: the record it built, not stored yet, and the
   * event it just GOT): reused, so subscribing reads and GETs nothing again. `stored` is set
   * once the record, with the subscription, is written.
   */
  loaded?: { record: EventRecord; event: Event; link: UserLink; stored: boolean };
}

export async function fetchAs(deps: Deps, record: EventRecord, link: UserLink): Promise<Event> {
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

export async function putSub(deps: Deps, id: string, sub: LiveSubscription): Promise<void> {
  await deps.store.subscriptions.put(id, sub);
  deps.live.forgetSubscription(id);
}

/** Has the event's owner (any process) look at it again: cards are re-rendered and posted. */
export async function refresh(
  deps: Deps,
  team: string,
  eventId: string,
  subId: string,
  muted?: { channel: string; event: unknown },
): Promise<void> {
  await deps.store.outbox.put({
    team,
    subscriptionId: subId,
    eventId,
    receivedAt: deps.now(),
    message: refreshMessage(muted),
  });
  deps.live.nudge();
}

export async function removeUpstream(deps: Deps, record: EventRecord): Promise<void> {
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
 * whose answer was lost instead of posting it twice (src/live/recover.ts). Best effort: a private
 * channel (the bot must be invited), a workspace that forbids it, or an install without the scope
 * leave the channel as it was.
 */
async function joinChannel(deps: Deps, team: string, channel: string): Promise<void> {
  try {
    const client = await deps.bulkClient(team);
    await client.conversations.join({ channel });
  } catch (err) {
    deps.logger.info(
      { channel, error: slackErrorName(err) ?? (err as Error).message },
      "live: not joining the channel; posting there without membership",
    );
  }
}

/** Registers the event's webhook upstream (once per event), posts the card, schedules reminders. */
export async function subscribeChannel(deps: Deps, args: SubscribeArgs): Promise<void> {
  await withEventLock(deps, args.team, args.eventId, () => subscribeLocked(deps, args));
}

async function subscribeLocked(deps: Deps, args: SubscribeArgs): Promise<void> {
  const loaded = args.loaded;
  const record = loaded?.record ?? (await deps.store.events.get(args.team, args.eventId));
  if (!record) throw unknownEvent(args.eventId);
  if (record.cancelled) throw cancelledEvent();
  const link = loaded?.link ?? (await organizerLink(deps, record));
  const event = loaded?.event ?? (await fetchAs(deps, record, link));
  // The engine schedules (and later moves or deletes) the reminders, paced with the channel's
  // posts and honouring any Retry-After; here they are only asked for.
  const mins = args.remindersMin ?? [...DEFAULT_REMINDERS_MIN];
  const withMins = (s: LiveSubscription): LiveSubscription => {
    const { [args.channel]: old, ...others } = s.reminders ?? {};
    return { ...s, reminders: { ...others, [args.channel]: { ...old, mins } } };
  };
  await joinChannel(deps, args.team, args.channel);
  const existing = await subscriptionOf(deps, record);
  const noise = args.noise ?? existing?.sub.channelNoise?.[args.channel] ?? DEFAULT_NOISE;
  let subId: string;
  let sub: LiveSubscription;
  if (existing && !existing.sub.cancelled) {
    subId = existing.id;
    sub = withMins({
      ...existing.sub,
      channels: existing.sub.channels.includes(args.channel)
        ? existing.sub.channels
        : [...existing.sub.channels, args.channel],
      channelNoise: { ...existing.sub.channelNoise, [args.channel]: noise },
      event: publicEvent(event),
    });
    await putSub(deps, subId, sub);
  } else {
    subId = randomBytes(18).toString("base64url");
    const secret = randomBytes(32).toString("base64url");
    sub = withMins({
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
    } satisfies Subscription & LiveSubscription);
    // Stored first: a message delivered right after registration must find it.
    await putSub(deps, subId, sub);
    try {
      await withUserToken(deps, args.team, link, (t) =>
        deps.events.registerWebhook(t.accessToken, t.userId, args.eventId, {
          type: WEBHOOK_TYPES,
          method: "POST",
          headers: { [WEBHOOK_SECRET_HEADER]: secret },
          url: deps.webhookUrl(subId),
        }),
      );
    } catch (err) {
      await deps.store.subscriptions.delete(subId);
      deps.live.forgetSubscription(subId);
      throw err;
    }
    // A record the caller has not stored yet is this one; a stored one is read again, under
    // the lock, so nothing written since is undone.
    const fresh =
      loaded && !loaded.stored
        ? record
        : ((await deps.store.events.get(args.team, args.eventId)) ?? record);
    await deps.store.events.put({
      ...fresh,
      subscriptions: [...fresh.subscriptions.filter((s) => s !== subId), subId],
      updatedAt: deps.now(),
    });
    // The caller learns its record is stored (and must not write it again over this).
    if (loaded) loaded.stored = true;
  }
  await refresh(deps, args.team, args.eventId, subId);
}

/**
 * Stops live notices for the event in one channel. When no channel is left, both webhook types
 * are removed upstream and the subscription is deleted. False when the channel was not notified.
 */
export async function unsubscribeChannel(
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
  if (!record) throw unknownEvent(eventId);
  const found = await subscriptionOf(deps, record);
  if (!found?.sub.channels.includes(channel)) return false;
  // The engine deletes the channel's reminders once the channel is no longer notified.
  const channels = found.sub.channels.filter((c) => c !== channel);
  if (channels.length === 0) {
    await removeUpstream(deps, record);
    await deps.store.subscriptions.delete(found.id);
    deps.live.forgetSubscription(found.id);
    const fresh = (await deps.store.events.get(team, eventId)) ?? record;
    await deps.store.events.put({
      ...fresh,
      subscriptions: fresh.subscriptions.filter((s) => s !== found.id),
      updatedAt: deps.now(),
    });
    // No subscription left: the engine, looking again, deletes the channel's reminders and
    // marks the channel's card muted.
    await refresh(deps, team, eventId, found.id, { channel, event: found.sub.event });
    return true;
  }
  const { [channel]: _gone, ...reminders } = found.sub.reminders ?? {};
  const { [channel]: _noise, ...channelNoise } = found.sub.channelNoise ?? {};
  await putSub(deps, found.id, { ...found.sub, channels, reminders, channelNoise });
  await refresh(deps, team, eventId, found.id, { channel, event: found.sub.event });
  return true;
}
