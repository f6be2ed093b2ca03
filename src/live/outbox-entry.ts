import { isRefresh, mutedOf } from "../domain/subscription.ts";
import type { OutboxRow } from "../store/index.ts";
import { type WebhookMessage, webhookMessageSchema } from "../upstream/events/schemas.ts";

/**
 * An outbox item as the engine reads it, parsed once where it is read (engine.ts) and never
 * again: a webhook message to apply, a refresh (re-render the cards; a mute's carries the
 * channel whose card now says so), or something unreadable that is only removed. Items written
 * by earlier versions read the same way (`eventId` may sit only in the message).
 */
export type OutboxEntry = {
  readonly id: string;
  /** The record holding it (markers name records), and that record's store key. */
  readonly record: string;
  readonly key: string;
  readonly team: string;
  readonly subscriptionId: string;
  /** Undefined when neither the item nor its message names one. */
  readonly eventId: string | undefined;
} & (
  | { readonly kind: "webhook"; readonly message: WebhookMessage }
  | { readonly kind: "refresh"; readonly muted?: { channel: string; event: unknown } }
  | { readonly kind: "unreadable" }
);

export function entryOf({ id, item, record, key }: OutboxRow): OutboxEntry {
  const message = item.message;
  const eventId =
    item.eventId ?? ((message as { eventId?: unknown } | undefined)?.eventId as string | undefined);
  const base = {
    id,
    record,
    key,
    team: item.team,
    subscriptionId: item.subscriptionId,
    eventId: typeof eventId === "string" && eventId ? eventId : undefined,
  };
  if (isRefresh(message)) {
    const muted = mutedOf(message);
    return muted ? { ...base, kind: "refresh", muted } : { ...base, kind: "refresh" };
  }
  const parsed = webhookMessageSchema.safeParse(message);
  return parsed.success
    ? { ...base, kind: "webhook", message: parsed.data }
    : { ...base, kind: "unreadable" };
}
