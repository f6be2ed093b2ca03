/** An event scheduled at the sandbox and known to the app, as the schedule flow would leave it. */
import type { OnAirApp } from "../../src/app.ts";
import { subscribeChannel } from "../../src/domain/subscriptions.ts";
import { SANDBOX_SEEDS } from "../../src/sandbox/index.ts";
import { DEFAULT_SETTINGS, type Store } from "../../src/store/index.ts";
import { type BenchApp, EMAILS, TEAM, USERS } from "./app.ts";

export interface SeededEvent {
  eventId: string;
  title: string;
}

/** Links the organizer, creates the event upstream and records it, through the app's own deps. */
export async function seedEvent(app: BenchApp, title: string): Promise<SeededEvent> {
  return seedEventIn(app.app, TEAM, title);
}

/** seedEvent for any workspace of an app (the many-events row spreads events over twenty). */
export async function seedEventIn(
  app: OnAirApp,
  team: string,
  title: string,
): Promise<SeededEvent> {
  const deps = app.deps;
  const email = EMAILS[USERS.omar]!;
  const t = await deps.tokens.userToken(team, email, SANDBOX_SEEDS.events);
  await deps.store.users.put(team, USERS.omar, {
    email,
    userId: t.userId,
    enterpriseId: t.enterpriseId,
  });
  const start = Date.now() + 3 * 3600_000;
  const { id } = await deps.events.createEvent(t.accessToken, t.userId, {
    title,
    start,
    end: start + 3600_000,
    timezone: "UTC",
    panelists: [],
    moderators: [],
  });
  await deps.store.events.put({
    team,
    eventId: id,
    organizer: USERS.omar,
    upstreamUserId: t.userId,
    title,
    subscriptions: [],
    cards: {},
    instances: {},
    createdAt: Date.now(),
  });
  return { eventId: id, title };
}

/**
 * Subscribes a channel through the live area's own path and returns the webhook target the
 * events service was given. The secret exists only in that registration (the store keeps its
 * hash), so the bench reads it where the upstream would: the registerWebhook call.
 */
export async function subscribe(
  h: BenchApp,
  title: string,
  channel: string,
): Promise<{ eventId: string; url: string; headers: Record<string, string> }> {
  const deps = h.app.deps;
  const event = await seedEvent(h, title);
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

/** What a team needs in the store to use a sandbox of its own (a child app): its credentials. */
export async function seedExternal(
  store: Store,
  opts: { eventsBaseUrl: string; title: string },
): Promise<SeededEvent> {
  await store.settings.put(TEAM, {
    ...structuredClone(DEFAULT_SETTINGS),
    eventsAppKey: SANDBOX_SEEDS.events.clientId,
    eventsAppSecret: SANDBOX_SEEDS.events.clientSecret,
    relayUsername: SANDBOX_SEEDS.relay.username,
    relayPassword: SANDBOX_SEEDS.relay.password,
  });
  const email = EMAILS[USERS.omar]!;
  const call = async (path: string, body: unknown, token?: string) =>
    fetch(`${opts.eventsBaseUrl}${path}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json",
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify(body),
    });
  const grant = await call("/api/security/v1/oauth/accesstoken", {
    grant_type: "user_app",
    properties: {
      client_id: SANDBOX_SEEDS.events.clientId,
      client_secret: SANDBOX_SEEDS.events.clientSecret,
      user_email: email,
    },
  });
  const token = (await grant.json()) as {
    access_token: string;
    userId: number;
    enterpriseId: number;
  };
  const start = Date.now() + 3 * 3600_000;
  const created = await call(
    `/api/scheduling/v1/users/${token.userId}/events`,
    { title: opts.title, start, end: start + 3600_000, timezone: "UTC" },
    token.access_token,
  );
  if (created.status !== 201) throw new Error(`create event: ${created.status}`);
  const { id } = (await created.json()) as { id: string };
  await store.users.put(TEAM, USERS.omar, {
    email,
    userId: token.userId,
    enterpriseId: token.enterpriseId,
  });
  await store.events.put({
    team: TEAM,
    eventId: id,
    organizer: USERS.omar,
    upstreamUserId: token.userId,
    title: opts.title,
    subscriptions: [],
    cards: {},
    instances: {},
    createdAt: Date.now(),
  });
  return { eventId: id, title: opts.title };
}

/** Sums the "N joined" / "N left" of digest texts. */
export function digestTotals(texts: readonly string[]): { joined: number; left: number } {
  let joined = 0;
  let left = 0;
  for (const t of texts) {
    joined += Number(/\*(\d+) joined\*/.exec(t)?.[1] ?? 0);
    left += Number(/\*(\d+) left\*/.exec(t)?.[1] ?? 0);
  }
  return { joined, left };
}
