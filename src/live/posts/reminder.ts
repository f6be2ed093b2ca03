import { NO_UNFURL, verbatimSections } from "../../blocks/kit.ts";
import { slackErrorName } from "../../slack-errors.ts";
import { methodCall, type PostSpec } from "../post-once.ts";
import { findScheduled, type WantedReminder } from "../reminders.ts";
import type { PostContext } from "./context.ts";

/** A reminder Slack would not hold, kept in the list so it is not asked for again. */
export const SKIPPED = "skipped:";
/**
 * chat.scheduleMessage refusals about this one reminder, not the channel: its time (too near or
 * too far by Slack's clock), or Slack's cap of 30 scheduled messages within 5 minutes in one
 * channel (restricted_too_many: many events starting together). The card's lane goes on.
 */
const NOT_HELD = new Set(["invalid_time", "time_in_past", "time_too_far", "restricted_too_many"]);

type Mark = { key: string; postAt: number; at: number };

/**
 * One reminder scheduled in Slack (chat.scheduleMessage). `wanted`: the one to schedule, or
 * undefined when only a mark left over is to be settled; `stillWanted` finds what a mark was for.
 * Not found after a lost answer, the next turn decides afresh (what is wanted may have changed).
 */
export function reminder(
  { port, ch, c, client }: PostContext,
  wanted: WantedReminder | undefined,
  stillWanted: (key: string) => WantedReminder | undefined,
): PostSpec<Mark, string, string | undefined> {
  return {
    kind: "reminder",
    marked: () => c.reminderPosting,
    find: async (mark) => {
      const w = stillWanted(mark.key);
      return w ? methodCall(findScheduled(client, ch, w)) : undefined;
    },
    adopt: (id, mark) => {
      c.reminders = [...(c.reminders ?? []), { id, postAt: mark.postAt, key: mark.key }];
    },
    notFound: () => "later",
    mark: (now) => {
      if (!wanted) throw new Error("live: a reminder to schedule was not named");
      c.reminderPosting = { key: wanted.key, postAt: wanted.postAt, at: now };
    },
    unmark: () => {
      delete c.reminderPosting;
    },
    call: async () => {
      if (!wanted) throw new Error("live: a reminder to schedule was not named");
      try {
        const res = await methodCall(
          client.chat.scheduleMessage({
            channel: ch,
            post_at: wanted.postAt,
            text: wanted.text,
            blocks: verbatimSections(wanted.text),
            ...NO_UNFURL,
          }),
        );
        return res.scheduled_message_id;
      } catch (err) {
        // Slack will not hold this one (see NOT_HELD): the channel is fine, this reminder is
        // skipped rather than tried again and again.
        if (!NOT_HELD.has(slackErrorName(err) ?? "")) throw err;
        port.logger.warn(
          { channel: ch, eventId: port.eventId, postAt: wanted.postAt, error: slackErrorName(err) },
          "live: Slack would not schedule a reminder at that time; skipped",
        );
        return `${SKIPPED}${wanted.key}`;
      }
    },
    record: (id) => {
      if (wanted && id) {
        c.reminders = [...(c.reminders ?? []), { id, postAt: wanted.postAt, key: wanted.key }];
      }
    },
  };
}
