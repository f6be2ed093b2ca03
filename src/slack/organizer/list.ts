import type { Deps } from "../../deps.ts";
import type { EventRecord, UserLink } from "../../store/index.ts";
import { EventsError } from "../../upstream/errors.ts";
import type { Event } from "../../upstream/events/schemas.ts";
import { requireLinked } from "../access.ts";
import { buildEventList, type ListedEvent } from "../blocks/event-list.ts";
import { buildOrganizerDetails } from "../blocks/organizer-details.ts";
import type { CommandContext } from "../router.ts";
import { fetchEvent } from "./common.ts";
import { knownEvents, resolveEvent } from "./resolve.ts";
import { dailyOccurrences } from "./time.ts";
import { knownZone } from "./zones.ts";

async function refresh(
  deps: Deps,
  team: string,
  link: UserLink,
  record: EventRecord,
): Promise<ListedEvent> {
  try {
    return { eventId: record.eventId, event: await fetchEvent(deps, team, link, record) };
  } catch (err) {
    if (err instanceof EventsError && err.status === 404) {
      return {
        eventId: record.eventId,
        ...(record.title !== undefined ? { title: record.title } : {}),
      };
    }
    throw err;
  }
}

/**
 * When the event next happens: the start of the first occurrence not yet over (a daily series
 * counts its occurrences in the event's own zone), or undefined when all are over.
 */
export function nextStart(e: Event, now: number): number | undefined {
  const length = e.end - e.start;
  const p = e.recurrencePattern;
  const starts =
    p && p.recurrenceType === "DAILY" && p.recurrenceCount > 1 && knownZone(e.timezone)
      ? dailyOccurrences(
          e.start,
          e.timezone,
          Math.max(1, p.frequency),
          Math.min(p.recurrenceCount, 1000),
        )
      : [e.start];
  return starts.find((s) => s + length >= now);
}

/** `/onair list`: the events On Air knows for the user, refreshed by GET, soonest first. */
export async function listCommand(ctx: CommandContext): Promise<void> {
  const { deps, teamId, userId } = ctx;
  const link = await requireLinked(deps, ctx.client, teamId, userId);
  const records = await knownEvents(deps, teamId, userId);
  const items: ListedEvent[] = [];
  // A few GETs at a time: a long list must not burst the events service.
  for (let i = 0; i < records.length; i += 5) {
    items.push(
      ...(await Promise.all(records.slice(i, i + 5).map((r) => refresh(deps, teamId, link, r)))),
    );
  }
  const now = deps.now();
  // Events the service no longer has sort last; the rest by when they next happen.
  const when = (it: ListedEvent) => (it.event ? nextStart(it.event, now) : Number.MAX_SAFE_INTEGER);
  const shown = items
    .map((it) => ({ ...it, ...(it.event ? { next: nextStart(it.event, now) } : {}) }))
    .filter((it) => !it.event || it.next !== undefined)
    .sort((a, b) => (when(a) ?? 0) - (when(b) ?? 0));
  const msg = buildEventList(shown);
  await ctx.respond({ response_type: "ephemeral", text: msg.text, blocks: msg.blocks });
}

/** `/onair show <event>`: everything, organizer details included; only the organizer sees it. */
export async function showCommand(ctx: CommandContext): Promise<void> {
  const { deps, teamId, userId } = ctx;
  const link = await requireLinked(deps, ctx.client, teamId, userId);
  const record = await resolveEvent(deps, teamId, userId, ctx.args, "/onair show <event>");
  const event = await fetchEvent(deps, teamId, link, record);
  const msg = buildOrganizerDetails(event, "Here is your event (only you can see this).");
  await ctx.respond({ response_type: "ephemeral", text: msg.text, blocks: msg.blocks });
}
