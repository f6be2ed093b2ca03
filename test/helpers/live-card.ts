import { expect } from "vitest";
import { type Harness, USERS } from "./app-harness.ts";
import { eventually } from "./live-fixtures.ts";

/**
 * `/onair notify` of a seeded event into `channel` (by its organizer, as Slack sends it), then
 * waits for the event's card there and returns its ts. `noise` is the notify's last word
 * ("digest", "every"), or nothing for the default.
 */
export async function notifyCard(
  h: Harness,
  event: { eventId: string; title: string },
  channel: string,
  noise = "",
): Promise<string> {
  await h.driver.slashCommand({
    user: USERS.omar,
    channel,
    text: `notify ${event.eventId} <#${channel}|x> ${noise}`.trim(),
    // Already in the form Slack sends (should_escape), not as typed.
    escaped: true,
  });
  return cardTsOf(h, channel, event.title);
}

/** Waits for the card titled `title` among `channel`'s top-level messages; its ts. */
export function cardTsOf(h: Harness, channel: string, title: string): Promise<string> {
  return eventually(
    () =>
      h.emulator.workspace
        .topLevel(channel)
        .find((m) => JSON.stringify(m.blocks ?? "").includes(title))?.ts,
    "the card",
  );
}

/**
 * Waits until the engine has scheduled `count` reminders of the event titled `title` in
 * `channel` (since call `since`), then asserts exactly that many. The engine schedules them a
 * turn or two after the card: a test that changes the channel (archives it, removes the bot)
 * waits for them first, or under load a reminder is the call that meets the change.
 */
export async function remindersScheduled(
  h: Harness,
  channel: string,
  title: string,
  since: number,
  count: number,
): Promise<void> {
  const scheduled = () =>
    h.emulator.calls
      .slice(since)
      .filter(
        (c) =>
          c.method === "chat.scheduleMessage" &&
          c.ok &&
          c.args.channel === channel &&
          String(c.args.text).includes(title),
      ).length;
  await eventually(
    () => (scheduled() >= count ? true : undefined),
    `the reminders scheduled in ${channel}`,
    10_000,
  );
  expect(scheduled()).toBe(count);
}
