import type { Deps } from "../../deps.ts";
import type { EventRecord } from "../../store/index.ts";
import { USER_ERROR_CODES, UserFacingError } from "../access.ts";
import { candidatesText } from "../blocks/event-list.ts";

/** The events this app knows for the user (scheduled or linked through it), cancelled ones left out. */
export async function knownEvents(deps: Deps, team: string, user: string): Promise<EventRecord[]> {
  return (await deps.store.events.list(team)).filter((r) => r.organizer === user && !r.cancelled);
}

/**
 * An event named by its id, or by an unambiguous start of its title (case-insensitive).
 * Several matches list the candidates; none says how to find one.
 */
export async function resolveEvent(
  deps: Deps,
  team: string,
  user: string,
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
  const mine = await knownEvents(deps, team, user);
  const byId = mine.find((r) => r.eventId === q);
  if (byId) return byId;
  const lower = q.toLowerCase();
  const exact = mine.filter((r) => (r.title ?? "").toLowerCase() === lower);
  if (exact.length === 1 && exact[0]) return exact[0];
  const matches = mine.filter((r) => (r.title ?? "").toLowerCase().startsWith(lower));
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
    `None of your events has the id or a title starting with “${q.slice(0, 80)}”. Run \`/onair list\` to see them.`,
  );
}
