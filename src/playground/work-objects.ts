import {
  DriverError,
  flexpanesFor,
  type Json,
  openWorkObject,
  pressFlexpaneAction,
  type SlackEmulator,
  setWorkObjects,
  type Workspace,
  workObjectsOf,
} from "@onair/slack-emulator";
import { BadRequest } from "./requests.ts";

/**
 * The playground's Work Objects: the app's Work Object Previews switch (off, as on a new app:
 * join links unfurl as today's blocks), the Work Objects a message was unfurled with for the
 * page to draw, and a person opening one (entity_details_requested) and pressing its flexpane's
 * buttons, as Slack's client sends them.
 */

/**
 * What the switch was last set to. The emulator keeps the setting but does not say it, so the
 * page's word is kept here, per workspace; it starts off, as the emulator's does.
 */
const switched = new WeakMap<Workspace, boolean>();

export function workObjectsOn(ws: Workspace): boolean {
  return switched.get(ws) ?? false;
}

export function switchWorkObjects(ws: Workspace, enabled: boolean): void {
  setWorkObjects(ws, { enabled });
  switched.set(ws, enabled);
}

/** A message as the page gets it, with the Work Objects it was unfurled with, if any. */
export function withWorkObjects(ws: Workspace, channel: string, message: Json): Json {
  const found = workObjectsOf(ws, channel, String(message.ts));
  return Object.keys(found).length > 0 ? { ...message, work_objects: found } : message;
}

/** The flexpane last presented to the person: what the page's side panel shows. */
export function flexpaneOf(ws: Workspace, user: string): Json | null {
  const f = flexpanesFor(ws, user).at(-1);
  if (!f) return null;
  return {
    trigger: f.triggerId,
    channel: f.channel,
    message_ts: f.messageTs,
    ...(f.metadata !== undefined && { metadata: f.metadata }),
    ...(f.error !== undefined && { error: f.error }),
  };
}

/**
 * Opens a Work Object for the person and waits for the app's entity.presentDetails (Slack shows
 * a spinner until it comes); the flexpane it presented, or a 504 when none came in `waitMs`.
 */
export async function openFlexpane(
  emulator: SlackEmulator,
  input: { user: string; channel: string; message_ts: string; url: string },
  waitMs = 10_000,
): Promise<Json> {
  const ws = emulator.workspace;
  const before = flexpanesFor(ws, input.user).length;
  let r: Awaited<ReturnType<typeof openWorkObject>>;
  try {
    r = await openWorkObject(emulator.driver, ws, input);
  } catch (err) {
    if (err instanceof DriverError) throw new BadRequest(err.message, 409);
    throw err;
  }
  if (r.status !== 200) throw new BadRequest(`the app answered HTTP ${r.status}`, 502);
  const until = Date.now() + waitMs;
  while (flexpanesFor(ws, input.user).length === before) {
    if (Date.now() > until) throw new BadRequest("the app presented no details in time", 504);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return flexpaneOf(ws, input.user) ?? {};
}

/** A button of the person's flexpane, sent as Slack sends it (block_actions). */
export async function pressFlexpane(
  emulator: SlackEmulator,
  input: { user: string; action_id: string },
): Promise<number> {
  try {
    const r = await pressFlexpaneAction(emulator.driver, emulator.workspace, input);
    return r.status;
  } catch (err) {
    if (err instanceof DriverError) throw new BadRequest(err.message, 409);
    throw err;
  }
}
