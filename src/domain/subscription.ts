import { z } from "zod";
import { NOISE_LEVELS, type NoiseLevel, type Subscription } from "../store/index.ts";
import { type Event, eventSchema } from "../upstream/events/schemas.ts";

/**
 * An event's live subscription: the shared `sub:{id}` record (src/store/records.ts) extended with
 * what the live card needs per channel (a loose object). One subscription per event, fanned out
 * to its channels.
 *
 * Secret choice: the webhook secret is never stored, only its SHA-256. Adding a channel to an
 * event that already has a subscription changes nothing upstream (same URL, same secret); when
 * the last channel is muted the subscription is deleted and both types are removed upstream, so a
 * later notify registers a fresh subscription with a fresh secret.
 */

const RemindersSchema = z.object({
  /** Minutes before the start; the live engine keeps Slack's scheduled messages in step. */
  mins: z.array(z.number().int().positive()),
  /** Ids scheduled by an earlier version, which scheduled them here; the engine adopts them. */
  scheduled: z.array(z.object({ id: z.string(), postAt: z.number() })).optional(),
});
export type ChannelReminders = z.output<typeof RemindersSchema>;

const SubExtension = z.object({
  channelNoise: z.record(z.string(), z.enum(NOISE_LEVELS)).optional(),
  /** The event's public facts for the card (organizer-only fields blanked). */
  event: z.unknown().optional(),
  cancelled: z.boolean().optional(),
  /** The events service no longer has the event (deleted outside On Air). */
  gone: z.boolean().optional(),
  reminders: z.record(z.string(), RemindersSchema).optional(),
});

export type LiveSubscription = Subscription & z.output<typeof SubExtension>;

export function asLiveSub(sub: Subscription): LiveSubscription {
  const ext = SubExtension.safeParse(sub);
  return ext.success ? { ...sub, ...ext.data } : sub;
}

export function noiseOf(sub: LiveSubscription, channel: string): NoiseLevel {
  return sub.channelNoise?.[channel] ?? sub.noise;
}

export function eventOf(sub: LiveSubscription): Event | undefined {
  const parsed = eventSchema.safeParse(sub.event);
  return parsed.success ? (parsed.data as Event) : undefined;
}

/** What a channel may see: moderator and panelist links, passcodes and dial-in are blanked. */
export function publicEvent(e: Event): Event {
  return {
    ...e,
    moderatorUrl: "",
    panelistUrl: "",
    participantPasscode: "",
    attendeeMeetingPasscode: "",
    dialInNumbers: {},
    moderatorMessage: "",
    panelistMessage: "",
  };
}

export const DEFAULT_NOISE: NoiseLevel = "digest";
export const DEFAULT_REMINDERS_MIN = [60, 10] as const;

/** The header carrying the subscription's shared secret on every webhook delivery. */
export const WEBHOOK_SECRET_HEADER = "x-onair-secret";

/** The outbox item that has the event's owner re-render its cards (no webhook message). */
export const REFRESH_KIND = "refresh";

export function isRefresh(message: unknown): boolean {
  return (
    typeof message === "object" &&
    message !== null &&
    (message as { kind?: unknown }).kind === REFRESH_KIND
  );
}

export function refreshMessage(muted?: { channel: string; event: unknown }): {
  kind: string;
  muted?: { channel: string; event: unknown };
} {
  return muted ? { kind: REFRESH_KIND, muted } : { kind: REFRESH_KIND };
}

/** A refresh sent by mute: the channel whose card now says it is muted, and what it shows. */
export function mutedOf(message: unknown): { channel: string; event: unknown } | undefined {
  const m = (message as { muted?: { channel?: unknown; event?: unknown } } | undefined)?.muted;
  return typeof m?.channel === "string" ? { channel: m.channel, event: m.event } : undefined;
}
