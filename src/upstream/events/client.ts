import type { Http } from "../http.ts";
import {
  createEventResponseSchema,
  type Event,
  type EventInput,
  type EventPatch,
  eventSchema,
  type RecurrencePattern,
  tokenResponseSchema,
  userTokenResponseSchema,
  type WebhookRegistration,
  type WebhookType,
} from "./schemas.ts";

export interface AppCredentials {
  clientId: string;
  clientSecret: string;
}

export interface UserGrant {
  accessToken: string;
  /** expires_in as sent; read as seconds (README: "The upstream services, in brief"). */
  expiresInSec: number;
  userId: number;
  enterpriseId: number;
}

export interface EnterpriseGrant {
  accessToken: string;
  expiresInSec: number;
  enterpriseId: number;
}

export interface EventsClient {
  grantUserApp(req: AppCredentials & { email: string }): Promise<UserGrant>;
  grantEnterpriseApp(req: AppCredentials): Promise<EnterpriseGrant>;
  createEvent(token: string, userId: number, event: EventInput): Promise<{ id: string }>;
  /** Sends exactly the fields given: a partial update. */
  editEvent(token: string, userId: number, eventId: string, patch: EventPatch): Promise<void>;
  getEvent(token: string, userId: number, eventId: string): Promise<Event>;
  deleteEvent(token: string, userId: number, eventId: string): Promise<void>;
  registerWebhook(
    token: string,
    userId: number,
    eventId: string,
    registration: WebhookRegistration,
  ): Promise<void>;
  removeWebhook(token: string, userId: number, eventId: string, type: WebhookType): Promise<void>;
}

const TOKEN_PATH = "/api/security/v1/oauth/accesstoken";
const EVENTS_ROUTE = "/api/scheduling/v1/users/:userId/events";
const EVENT_ROUTE = "/api/scheduling/v1/users/:userId/events/:eventId";
const WEBHOOK_ROUTE = "/api/webhook/v1/users/:userId/events/:eventId";
const WEBHOOK_TYPE_ROUTE = "/api/webhook/v1/users/:userId/events/:eventId/type/:type";

/** The grant endpoint's 4xx mean something more specific than the defaults. */
const GRANT_USER_MESSAGES = {
  400: "The live events service did not accept the token request. A workspace admin should check the events app key and secret in `/onair settings`.",
  401: "The live events service did not accept On Air's app key and secret. A workspace admin can fix them in `/onair settings`.",
  403: "The live events service refused On Air's app. Ask your events admin to check the app, and that enterprise-level APIs are enabled.",
  404: "The live events service has no user with your e-mail address. Ask your events admin to add you, then run `/onair link`.",
} as const;

/**
 * Outgoing recurrence: counts as strings, as the service expects them on create. A count of 0
 * means "ends by endDate" (the service returns 0 then) and is left out, as unused fields are.
 */
function recurrenceOut(p: RecurrencePattern): Record<string, unknown> {
  const { recurrenceCount, ...rest } = p;
  return {
    ...rest,
    frequency: String(p.frequency),
    ...(recurrenceCount > 0 ? { recurrenceCount: String(recurrenceCount) } : {}),
  };
}

function eventBody(e: EventPatch): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(e)) if (v !== undefined) out[k] = v;
  if (e.recurrencePattern) out["recurrencePattern"] = recurrenceOut(e.recurrencePattern);
  return out;
}

export function createEventsClient({
  baseUrl,
  http,
}: {
  baseUrl: string;
  http: Http;
}): EventsClient {
  const base = baseUrl.replace(/\/+$/, "");
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const seg = encodeURIComponent;
  const eventUrl = (userId: number, eventId: string) =>
    `${base}/api/scheduling/v1/users/${userId}/events/${seg(eventId)}`;

  return {
    async grantUserApp({ clientId, clientSecret, email }) {
      const res = await http.request({
        service: "events",
        method: "POST",
        url: `${base}${TOKEN_PATH}`,
        route: TOKEN_PATH,
        body: {
          grant_type: "user_app",
          properties: { client_id: clientId, client_secret: clientSecret, user_email: email },
        },
        schema: userTokenResponseSchema,
        expectStatus: [200],
        // A grant has no lasting effect, so resending it is harmless.
        retry: "idempotent",
        userMessages: GRANT_USER_MESSAGES,
      });
      const b = res.body;
      return {
        accessToken: b.access_token,
        expiresInSec: b.expires_in,
        userId: b.userId,
        enterpriseId: b.enterpriseId,
      };
    },

    async grantEnterpriseApp({ clientId, clientSecret }) {
      const res = await http.request({
        service: "events",
        method: "POST",
        url: `${base}${TOKEN_PATH}`,
        route: TOKEN_PATH,
        body: {
          grant_type: "enterprise_app",
          properties: { client_id: clientId, client_secret: clientSecret },
        },
        schema: tokenResponseSchema,
        expectStatus: [200],
        retry: "idempotent",
        userMessages: GRANT_USER_MESSAGES,
      });
      const b = res.body;
      return {
        accessToken: b.access_token,
        expiresInSec: b.expires_in,
        enterpriseId: b.enterpriseId,
      };
    },

    async createEvent(token, userId, event) {
      const res = await http.request({
        service: "events",
        method: "POST",
        url: `${base}/api/scheduling/v1/users/${userId}/events`,
        route: EVENTS_ROUTE,
        headers: bearer(token),
        body: eventBody(event),
        schema: createEventResponseSchema,
        expectStatus: [201],
        // A resent create would schedule the event twice.
        retry: "safe-post",
      });
      return { id: res.body.id };
    },

    async editEvent(token, userId, eventId, patch) {
      await http.request({
        service: "events",
        method: "PUT",
        url: eventUrl(userId, eventId),
        route: EVENT_ROUTE,
        headers: bearer(token),
        body: eventBody(patch),
        expectStatus: [204],
      });
    },

    async getEvent(token, userId, eventId) {
      const res = await http.request({
        service: "events",
        method: "GET",
        url: eventUrl(userId, eventId),
        route: EVENT_ROUTE,
        headers: bearer(token),
        schema: eventSchema,
        expectStatus: [200],
      });
      return res.body as Event;
    },

    async deleteEvent(token, userId, eventId) {
      await http.request({
        service: "events",
        method: "DELETE",
        url: eventUrl(userId, eventId),
        route: EVENT_ROUTE,
        headers: bearer(token),
        expectStatus: [204],
        acceptOnRetry: [404],
      });
    },

    async registerWebhook(token, userId, eventId, registration) {
      await http.request({
        service: "events",
        method: "POST",
        url: `${base}/api/webhook/v1/users/${userId}/events/${seg(eventId)}`,
        route: WEBHOOK_ROUTE,
        headers: bearer(token),
        body: {
          type: [...registration.type],
          method: registration.method,
          headers: { ...registration.headers },
          url: registration.url,
        },
        expectStatus: [204],
        // Registering a type again replaces its configuration: resending is harmless.
        retry: "idempotent",
      });
    },

    async removeWebhook(token, userId, eventId, type) {
      await http.request({
        service: "events",
        method: "DELETE",
        url: `${base}/api/webhook/v1/users/${userId}/events/${seg(eventId)}/type/${seg(type)}`,
        route: WEBHOOK_TYPE_ROUTE,
        headers: bearer(token),
        expectStatus: [204],
        acceptOnRetry: [404],
      });
    },
  };
}
