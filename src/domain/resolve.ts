import type { Deps } from "../deps.ts";
import type { EventRecord } from "../store/index.ts";
import type { Actor } from "./directory.ts";
import { USER_ERROR_CODES, UserFacingError } from "./errors.ts";
import { escapeMrkdwn, truncate } from "./text.ts";

/**
 * The one way a typed event name becomes a record: an event id of this workspace (any organizer;
 * the action then checks who may act), or an unambiguous title among the actor's own events —
 * an exact title first, then the start of one (case-insensitive). Cancelled events are left out.
 */

/** The events this app knows for the user (scheduled or linked through it), cancelled ones left out. */
export async function ownEvents(deps: Deps, team: string, user: string): Promise<EventRecord[]> {
  return (await deps.store.events.list(team)).filter((r) => r.organizer === user && !r.cancelled);
}

/** Several events match what the user typed: name them so the next try can be exact. */
export function candidatesText(
  query: string,
  matches: ReadonlyArray<{ eventId: string; title?: string }>,
): string {
  const lines = matches
    .slice(0, 10)
    .map((m) => `• ${escapeMrkdwn(truncate(m.title ?? "", 80))} — \`${escapeMrkdwn(m.eventId)}\``);
  return [
    `More than one of your events starts with “${escapeMrkdwn(truncate(query, 80))}”. Say which one by its id or a longer part of its title:`,
    ...lines,
    ...(matches.length > 10 ? [`…and ${matches.length - 10} more.`] : []),
  ].join("\n");
}

export async function resolveEvent(
  deps: Deps,
  actor: Actor,
  query: string,
  usage: string,
): Promise<EventRecord> {
  const q = query.trim().replace(/^["“'`]+|["”'`]+$/g, "");
  if (q === "") {
    throw new UserFacingError(
      USER_ERROR_CODES.invalid,
      `Say which event: \`${usage}\`, by its id or the start of its title. \`/onair list\` shows yours.`,
    );
  }
  if (!/[\s:]/.test(q) && q.length <= 128) {
    const byId = await deps.store.events.get(actor.team, q);
    if (byId && !byId.cancelled) return byId;
  }
  const mine = await ownEvents(deps, actor.team, actor.user);
  const lower = q.toLowerCase();
  const exact = mine.filter((r) => (r.title ?? "").toLowerCase() === lower);
  if (exact.length === 1 && exact[0]) return exact[0];
  const matches =
    exact.length > 1 ? exact : mine.filter((r) => (r.title ?? "").toLowerCase().startsWith(lower));
  if (matches.length === 1 && matches[0]) return matches[0];
  if (matches.length > 1) {
    throw new UserFacingError(
      USER_ERROR_CODES.invalid,
      candidatesText(
        q,
        matches.map((m) => ({
          eventId: m.eventId,
          ...(m.title !== undefined ? { title: m.title } : {}),
        })),
      ),
    );
  }
  throw new UserFacingError(
    USER_ERROR_CODES.notFound,
    `None of your events has the id or a title starting with “${escapeMrkdwn(truncate(q, 80))}”. Run \`/onair list\` to see them.`,
  );
}
