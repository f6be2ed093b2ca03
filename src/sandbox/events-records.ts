/**
 * What the embedded live events service keeps: its tokens' grants, its events with their live
 * state and webhook registrations, and its users (every address at example.com).
 */
import { createHash } from "node:crypto";
import type { EventFields, WebhookConfig, WebhookType } from "./events-schemas.ts";

export const EVENT_STATES = ["NOT_STARTED", "PREP_EVENT", "IN_EVENT"] as const;
export type EventState = (typeof EVENT_STATES)[number];

export interface EventsToken {
  readonly grant: "user_app" | "enterprise_app";
  readonly userId: number | undefined;
  readonly enterpriseId: number;
  readonly expiresAt: number;
}

export interface LiveAttendee {
  readonly endpointGuid: string;
  readonly endpointType: string;
  readonly name: string;
  readonly email?: string;
  readonly joinTime: number;
}

export interface StoredEvent {
  readonly id: string;
  readonly organizerId: number;
  fields: EventFields;
  readonly created: number;
  lastModified: number;
  readonly meetingNumericId: string;
  readonly participantPasscode: string;
  readonly attendeeMeetingNumericId: string;
  readonly attendeeMeetingPasscode: string;
  readonly webhooks: Map<WebhookType, WebhookConfig>;
  readonly live: {
    instanceId: string | null;
    state: EventState;
    /** Present attendees of the current instance, by endpointGuid. */
    attendees: Map<string, LiveAttendee>;
    /** Numbers synthetic attendees so their names stay unique across calls. */
    synthetic: number;
  };
}

/** Users are every address at example.com; an id is derived from the address so it is stable. */
export class Users {
  private readonly byEmail = new Map<string, number>();
  private readonly byId = new Map<number, string>();

  idFor(email: string): number {
    const key = email.toLowerCase();
    const known = this.byEmail.get(key);
    if (known !== undefined) return known;
    const digest = createHash("sha256").update(key).digest();
    let id = 100_000_000 + (digest.readUInt32BE(0) % 900_000_000);
    while (this.byId.has(id)) id += 1;
    this.byEmail.set(key, id);
    this.byId.set(id, key);
    return id;
  }

  has(id: number): boolean {
    return this.byId.has(id);
  }

  entries(): Array<[string, number]> {
    return [...this.byEmail.entries()];
  }

  restore(email: string, id: number): void {
    this.byEmail.set(email, id);
    this.byId.set(id, email);
  }
}

/** What the sandbox keeps across restarts (persist.ts): users and events, never a token. */
export interface SavedEventsState {
  users: Array<[string, number]>;
  events: Array<
    Omit<StoredEvent, "webhooks" | "live"> & {
      webhooks: Array<[WebhookType, WebhookConfig]>;
      live: Omit<StoredEvent["live"], "attendees"> & { attendees: LiveAttendee[] };
    }
  >;
}
