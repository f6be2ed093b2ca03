import { DriverError } from "./driver/state.ts";
import type { DriverResult, SlackDriver } from "./driver/types.ts";
import { randomHex } from "./ids.ts";
import { flexpanesFor, issueEntityTrigger, workObjectsOf } from "./work-objects.ts";
import type { Json, Workspace } from "./workspace.ts";

/**
 * A person opening a Work Object and pressing its flexpane's buttons, as Slack sends them:
 *
 * - `openWorkObject`: entity_details_requested (events-and-payloads.json) for a Work Object the
 *   app unfurled into a message the person can see, with a fresh trigger for
 *   entity.presentDetails; a link unfurled the classic way opens no flexpane (DriverError).
 * - `pressFlexpaneAction`: a button of the flexpane last presented to the person. Slack's
 *   reference does not show this payload; it is sent as a message's block_actions is (the
 *   button's action_id, value and text, a trigger_id, the channel and message the Work Object
 *   is in), which is what an app's button handlers read.
 *
 * Both go through the driver's signed delivery (driver.event, driver.send).
 */

export async function openWorkObject(
  driver: SlackDriver,
  ws: Workspace,
  input: { user: string; channel: string; message_ts: string; url: string },
): Promise<DriverResult & { triggerId: string }> {
  const user = ws.user(input.user) ?? ws.userByName(input.user.replace(/^@/, ""));
  const ch = ws.resolveChannel(input.channel);
  if (!user || !ch) throw new DriverError(`no user ${input.user} or channel ${input.channel}`);
  if (!ch.members.has(user.id)) throw new DriverError(`${user.name} cannot see ${ch.name}`);
  const entity = workObjectsOf(ws, ch.id, input.message_ts)[input.url];
  if (!entity) {
    throw new DriverError(`no Work Object for ${input.url} on ${input.message_ts} in ${ch.name}`);
  }
  const ref = entity.external_ref as { id: string; type?: string };
  const msg = ws.findMessage(ch, input.message_ts);
  const triggerId = issueEntityTrigger(
    ws,
    {
      user: user.id,
      externalRef: ref,
      url: input.url,
      channel: ch.id,
      messageTs: input.message_ts,
    },
    ws.now(),
  );
  const result = await driver.event({
    type: "entity_details_requested",
    user: user.id,
    trigger_id: triggerId,
    link: { url: input.url, domain: new URL(input.url).hostname },
    entity_url: String(entity.url),
    app_unfurl_url: input.url,
    external_ref: ref,
    user_locale: "en-US",
    channel: ch.id,
    message_ts: input.message_ts,
    ...(msg?.thread_ts !== undefined && msg.thread_ts !== msg.ts && { thread_ts: msg.thread_ts }),
  });
  return { ...result, triggerId };
}

export async function pressFlexpaneAction(
  driver: SlackDriver,
  ws: Workspace,
  input: { user: string; action_id: string },
): Promise<DriverResult & { triggerId: string }> {
  const user = ws.user(input.user) ?? ws.userByName(input.user.replace(/^@/, ""));
  if (!user) throw new DriverError(`no user ${input.user}`);
  const shown = flexpanesFor(ws, user.id).at(-1);
  if (!shown?.metadata) throw new DriverError(`${user.name} has no flexpane open`);
  const payload = (shown.metadata.entity_payload ?? {}) as Json;
  const actions = (payload.actions ?? {}) as {
    primary_actions?: Json[];
    overflow_actions?: Json[];
  };
  const button = [...(actions.primary_actions ?? []), ...(actions.overflow_actions ?? [])].find(
    (b) => b.action_id === input.action_id,
  );
  if (!button) throw new DriverError(`the flexpane has no action ${input.action_id}`);
  const ch = ws.resolveChannel(shown.channel);
  const triggerId = ws.issueTriggerId(user.id);
  const body: Json = {
    type: "block_actions",
    user: { id: user.id, username: user.name, name: user.name, team_id: user.team_id },
    api_app_id: ws.app.appId,
    token: ws.verificationToken,
    container: {
      type: "message",
      message_ts: shown.messageTs,
      channel_id: shown.channel,
      is_ephemeral: false,
    },
    trigger_id: triggerId,
    team: { id: ws.team.id, domain: ws.team.domain },
    enterprise: null,
    is_enterprise_install: false,
    channel: { id: shown.channel, name: ch?.name ?? shown.channel },
    actions: [
      {
        type: "button",
        action_id: button.action_id,
        block_id: `wo_${randomHex(3)}`,
        text: { type: "plain_text", text: String(button.text ?? "") },
        ...(button.value !== undefined && { value: button.value }),
        action_ts: (ws.now() / 1000).toFixed(6),
      },
    ],
  };
  const form = new URLSearchParams({ payload: JSON.stringify(body) }).toString();
  const result = await driver.send(form, "application/x-www-form-urlencoded");
  return { ...result, triggerId };
}
