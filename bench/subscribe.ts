import { subscribeChannel } from "../src/domain/subscriptions.ts";
import { type Harness, TEAM, USERS } from "../test/helpers/app-harness.ts";
import { seedEvent } from "../test/helpers/live-fixtures.ts";

/**
 * Subscribes a channel through the live area's own path and returns the webhook target the
 * events service was given. The secret exists only in that registration (the store keeps its
 * hash), so the bench reads it where the upstream would: the registerWebhook call.
 */
export async function subscribe(
  h: Harness,
  title: string,
  channel: string,
): Promise<{ eventId: string; url: string; headers: Record<string, string> }> {
  const deps = h.app.deps;
  const event = await seedEvent(deps, { team: TEAM, organizer: USERS.omar, title });
  const events = deps.events as { registerWebhook: (...a: never[]) => Promise<unknown> };
  const original = events.registerWebhook;
  let target: { url: string; headers: Record<string, string> } | undefined;
  events.registerWebhook = (async (...args: unknown[]) => {
    const cfg = args[3] as { url: string; headers: Record<string, string> };
    target = { url: cfg.url, headers: { ...cfg.headers } };
    return (original as (...a: unknown[]) => Promise<unknown>).apply(events, args);
  }) as typeof original;
  try {
    await subscribeChannel(deps, { team: TEAM, eventId: event.eventId, channel, user: USERS.omar });
  } finally {
    events.registerWebhook = original;
  }
  if (!target) throw new Error("no webhook was registered");
  return { eventId: event.eventId, ...target };
}
