import type { Deps } from "../deps.ts";
import type { EventRecord } from "../store/index.ts";
import type { Actor } from "./directory.ts";
import { USER_ERROR_CODES, UserFacingError } from "./errors.ts";
import { escapeMrkdwn, truncate } from "./text.ts";

/**
 * The one way a typed event name becomes a record: an event id of this workspace (any organizer;
 * the action then checks who may act), or an unambiguous title among the actor's own events —
 * an exact title first, then the start of one, then every word typed starting a word of the
 * title, anywhere in it (case-insensitive). Cancelled events are left out.
 */

/** Words as people type them: letters and digits, any script; punctuation splits. */
function wordsOf(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/**
 * The records a typed name picks, in order of how exactly: the exact title, else titles it
 * starts, else titles holding each typed word at the start of one of theirs ("town hall" finds
 * "Quarterly town hall", "hall" finds it too, "own" does not). The first tier with any match wins.
 */
export function titleMatches<R extends { title?: string | undefined }>(
  records: readonly R[],
  query: string,
): R[] {
  const lower = query.trim().toLowerCase();
  if (lower === "") return [];
  const title = (r: R) => (r.title ?? "").toLowerCase();
  const exact = records.filter((r) => title(r) === lower);
  if (exact.length > 0) return exact;
  const starts = records.filter((r) => title(r).startsWith(lower));
  if (starts.length > 0) return starts;
  const typed = wordsOf(lower);
  if (typed.length === 0) return [];
  return records.filter((r) => {
    const have = wordsOf(title(r));
    return typed.every((w) => have.some((h) => h.startsWith(w)));
  });
}

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
    `More than one of your events matches “${escapeMrkdwn(truncate(query, 80))}”. Say which one by its id or more words of its title:`,
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
      `Say which event: \`${usage}\`, by its id or words of its title. \`/onair list\` shows yours.`,
    );
  }
  if (!/[\s:]/.test(q) && q.length <= 128) {
    const byId = await deps.store.events.get(actor.team, q);
    if (byId && !byId.cancelled) return byId;
  }
  const mine = await ownEvents(deps, actor.team, actor.user);
  const matches = titleMatches(mine, q);
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
    `None of your events has the id “${escapeMrkdwn(truncate(q, 80))}” or those words in its title. Run \`/onair list\` to see them.`,
  );
}
