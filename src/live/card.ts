import { createHash } from "node:crypto";
import { buildEventCard } from "../slack/blocks/event-card.ts";
import type { KnownBlock } from "../slack/blocks/kit.ts";
import { NOISE_WORDS } from "./digest.ts";
import { eventOf, type LiveSubscription, noiseOf } from "./records.ts";
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
          },
        }
      : {}),
    ...(sub.cancelled ? { cancelled: true } : {}),
    noise: NOISE_WORDS[noise],
  });
  const hash = createHash("sha256")
    .update(card.text)
    .update("\0")
    .update(JSON.stringify(card.blocks))
    .digest("base64url");
  return { ...card, hash };
}
