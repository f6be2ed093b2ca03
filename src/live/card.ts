import { createHash } from "node:crypto";
import { buildEventCard, type EventCardLive } from "../blocks/event-card.ts";
import type { KnownBlock } from "../blocks/kit.ts";
import { NOISE_WORDS } from "../blocks/noise.ts";
import { occurrenceStarts } from "../domain/instance-end.ts";
import { eventOf, type LiveSubscription, noiseOf } from "../domain/subscription.ts";
import type { Event } from "../upstream/events/schemas.ts";
import type { EventLive } from "./state.ts";

export interface RenderedCard {
  text: string;
  blocks: KnownBlock[];
  /** Changes exactly when what the channel would see changes. */
  hash: string;
}

/** The channel's card: the event's public facts, the current instance's figures, cancelled or not. */
export function renderCard(
  sub: LiveSubscription,
  live: EventLive,
  channel: string,
): RenderedCard | undefined {
  const event = eventOf(sub);
  if (!event) return undefined;
  const inst = live.current();
  const noise = noiseOf(sub, channel);
  // Recorded by the engine (the run's advance step applies the quiet rule before planning).
  const endedAt = inst?.endedAt;
  const next = endedAt === undefined ? undefined : nextAfter(sub.event, event, endedAt);
  const card = buildEventCard({
    event,
    ...(inst
      ? {
          live: {
            state: inst.state ?? "NOT_STARTED",
            present: inst.present,
            peak: inst.peak,
            unique: inst.unique,
            instanceId: inst.id,
            ...(inst.state === "PREP_EVENT" ? { staffIn: live.staffIn(inst) } : {}),
            ...(endedAt !== undefined ? { endedAt } : {}),
            ...(next !== undefined ? { next } : {}),
          },
        }
      : {}),
    ...(sub.cancelled ? { cancelled: true } : {}),
    ...(sub.gone ? { gone: true } : {}),
    noise: NOISE_WORDS[noise],
  });
  return withHash(card);
}

/** Per event snapshot: the next occurrence after an end (a card renders on every lane turn). */
const nexts = new WeakMap<object, { endedAt: number; next: number | undefined }>();

function nextAfter(snapshot: unknown, event: Event, endedAt: number): number | undefined {
  const key = typeof snapshot === "object" && snapshot !== null ? snapshot : undefined;
  const hit = key ? nexts.get(key) : undefined;
  if (hit && hit.endedAt === endedAt) return hit.next;
  const next = occurrenceStarts(event).find((s) => s > endedAt);
  if (key) nexts.set(key, { endedAt, next });
  return next;
}

function withHash(card: { text: string; blocks: KnownBlock[] }): RenderedCard {
  const hash = createHash("sha256")
    .update(card.text)
    .update("\0")
    .update(JSON.stringify(card.blocks))
    .digest("base64url");
  return { ...card, hash };
}

/** The figures a muted card keeps: those of the moment it was muted. */
export function frozenFigures(live: EventLive): EventCardLive | undefined {
  const inst = live.current();
  if (!inst) return undefined;
  return {
    state: inst.state ?? "NOT_STARTED",
    present: inst.present,
    peak: inst.peak,
    unique: inst.unique,
    instanceId: inst.id,
    ...(inst.endedAt !== undefined ? { endedAt: inst.endedAt } : {}),
  };
}

/** A muted channel's card: the event and figures frozen at mute time, saying it is muted. */
export function renderMutedCard(muted: {
  event: unknown;
  figures: unknown;
}): RenderedCard | undefined {
  const event = eventOf({ event: muted.event } as LiveSubscription);
  if (!event) return undefined;
  const figures = muted.figures as EventCardLive | undefined;
  return withHash(buildEventCard({ event, ...(figures ? { live: figures } : {}), muted: true }));
}
