import type { EventPerson } from "../upstream/events/schemas.ts";
import type { Directory } from "./directory.ts";

/**
 * THE one place where Slack users become event people and back.
 *
 * The spec shows `panelists`, `moderators` and `attendees` as arrays but not their elements'
 * shape. On Air sends each person as `{ "email": "<address>" }`: an object leaves room for fields
 * a later contract may add, and the e-mail is the identity the events service already keys users
 * by (the user_app grant takes `user_email`). Reading back, both `{ email }` objects and plain
 * e-mail strings are understood, in case the service normalises either way.
 */
export interface PersonOut {
  email: string;
}

export function personOf(email: string): PersonOut {
  return { email };
}

/** The e-mail of one element of a people array as the service returns it, if it has one. */
export function emailOfPerson(p: EventPerson): string | undefined {
  if (typeof p === "string") return p.includes("@") ? p.toLowerCase() : undefined;
  if (p && typeof p === "object" && "email" in p && typeof p.email === "string") {
    return p.email.toLowerCase();
  }
  return undefined;
}

export function emailsOf(list: readonly EventPerson[] | undefined): string[] {
  const out: string[] = [];
  for (const p of list ?? []) {
    const e = emailOfPerson(p);
    if (e && !out.includes(e)) out.push(e);
  }
  return out;
}

export interface MappedPeople {
  people: PersonOut[];
  /** Slack users with no e-mail on their profile: they cannot be invited. */
  missing: string[];
}

/** Slack user ids → people, by the e-mails on their profiles (needs users:read.email). */
export async function slackUsersToPeople(
  directory: Directory,
  users: readonly string[],
): Promise<MappedPeople> {
  const people: PersonOut[] = [];
  const missing: string[] = [];
  // A handful at a time: a 500-person list must not burst Slack's rate limit.
  const unique = [...new Set(users)];
  for (let i = 0; i < unique.length; i += 10) {
    const batch = unique.slice(i, i + 10);
    const found = await Promise.all(
      batch.map(async (user) => ({ user, email: (await directory.profile(user)).email })),
    );
    for (const { user, email } of found) {
      if (email) people.push(personOf(email.toLowerCase()));
      else missing.push(user);
    }
  }
  return { people, missing };
}

/** E-mails → Slack user ids (for pre-filling pickers); addresses with no Slack user are left out. */
export async function emailsToSlackUsers(
  directory: Directory,
  emails: readonly string[],
): Promise<{ users: string[]; unknown: string[] }> {
  const users: string[] = [];
  const unknown: string[] = [];
  for (let i = 0; i < emails.length; i += 10) {
    const batch = emails.slice(i, i + 10);
    const found = await Promise.all(
      batch.map(async (email) => ({ email, id: await directory.userByEmail(email) })),
    );
    for (const f of found) {
      if (f.id) users.push(f.id);
      else unknown.push(f.email);
    }
  }
  return { users, unknown };
}
