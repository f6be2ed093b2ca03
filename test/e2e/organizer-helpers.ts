import { type CallRecord, validateBlocks, validateView } from "@onair/slack-emulator";
import { expect } from "vitest";
import type { Event } from "../../src/upstream/events/schemas.ts";
import type { Harness } from "../helpers/app-harness.ts";

/** Helpers shared by the organizer e2e suites: open a form, wait for answers, read the sandbox. */

export async function waitFor(
  h: Harness,
  match: (c: CallRecord) => boolean,
  since: number,
  timeoutMs = 5_000,
) {
  return h.emulator.waitForCall(match, { since, timeoutMs });
}

export function viewOf(c: CallRecord): Record<string, unknown> {
  return c.args.view as Record<string, unknown>;
}

/** Runs a slash command and waits for the modal it fills (views.update with that callback). */
export async function commandOpensModal(
  h: Harness,
  user: string,
  channel: string,
  text: string,
  callbackId: string,
) {
  const since = h.emulator.calls.length;
  await h.driver.slashCommand({ user, channel, text });
  const call = await waitFor(
    h,
    (c) => c.method === "views.update" && viewOf(c).callback_id === callbackId,
    since,
  );
  return call;
}

/** A message (ephemeral, DM or response_url) to this user whose text matches. */
export function isMessageTo(user: string, re: RegExp) {
  return (c: CallRecord) => {
    const text = `${String(c.args.text ?? "")} ${JSON.stringify(c.args.blocks ?? "")}`;
    if (!re.test(text)) return false;
    if (c.method === "chat.postEphemeral") return c.args.user === user;
    if (c.method === "chat.postMessage") return c.args.channel === user;
    return c.method === "response_url";
  };
}

export async function userToken(h: Harness, email: string) {
  return h.app.deps.events.grantUserApp({
    clientId: "sandbox-key",
    clientSecret: "sandbox-secret",
    email,
  });
}

export async function getUpstream(h: Harness, email: string, eventId: string): Promise<Event> {
  const t = await userToken(h, email);
  return h.app.deps.events.getEvent(t.accessToken, t.userId, eventId);
}

/** Every view and message the app sent passes Slack's Block Kit limits. */
export function expectAllPayloadsValid(h: Harness) {
  for (const c of h.emulator.calls) {
    if (c.method.startsWith("views.")) {
      expect(validateView(c.args.view).messages, `${c.method} #${c.seq}`).toEqual([]);
    } else if (c.args.blocks !== undefined) {
      expect(validateBlocks(c.args.blocks).messages, `${c.method} #${c.seq}`).toEqual([]);
    }
    expect(c.ok, `${c.method} #${c.seq}: ${c.error ?? ""}`).toBe(true);
  }
}

export const HOUR = 3_600_000;
/** A whole minute some days ahead (datetimepickers hold whole seconds). */
export function future(days: number, hourUtc = 15): number {
  const d = new Date(Date.now() + days * 24 * HOUR);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), hourUtc, 0);
}

/** Schedules through the real form; returns the new event's id (from the store). */
export async function scheduleViaForm(
  h: Harness,
  user: string,
  channel: string,
  title: string,
  start: number,
  values: Record<string, unknown> = {},
): Promise<string> {
  const { EVENT_FIELDS: F, VIEWS } = await import("../../src/ids.ts");
  await commandOpensModal(h, user, channel, "schedule", VIEWS.event);
  const since = h.emulator.calls.length;
  const res = await h.driver.viewSubmission({
    user,
    values: {
      [F.title]: title,
      [F.start]: new Date(start),
      [F.end]: new Date(start + HOUR),
      ...values,
    } as never,
  });
  expect(res.outcome.action).toBe("closed");
  await waitFor(h, isMessageTo(user, /Scheduled/), since);
  const records = await h.app.store.events.list("T0ONAIR");
  const found = records.filter((r) => r.title === title && r.organizer === user).at(-1);
  if (!found) throw new Error(`event ${title} not stored`);
  return found.eventId;
}
