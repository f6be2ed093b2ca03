import { SlackApiError } from "../errors.ts";
import { escapeSlashText } from "../slash-text.js";
import type { Channel, Json, User, Workspace } from "../workspace.ts";
import type { DriverContext } from "./context.ts";
import { DriverError } from "./state.ts";
import type { DriverResult, SlashCommandInput } from "./types.ts";

/** A slash command as Slack sends it, and what Slack shows for the app's acknowledgement. */

const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

export async function slashCommand(
  ctx: DriverContext,
  input: SlashCommandInput,
): Promise<DriverResult> {
  const { ws, userOf, channelOf, org, domainOf, sendForm } = ctx;
  const user = userOf(input.user);
  const ch = channelOf(input.channel);
  if ((ch.is_private || ch.is_im || ch.is_mpim) && !ch.members.has(user.id)) {
    throw new DriverError(`${user.name} is not in ${ch.name} and cannot type a command there`);
  }
  const typed = input.text ?? "";
  const text = input.escaped ? typed : escapeSlashText(typed, ws.directory(user.id));
  const triggerId = ws.issueTriggerId(user.id);
  const responseUrl = ws.createResponseUrl({ channel: ch.id, user: user.id });
  const r = await sendForm(
    {
      token: ws.verificationToken,
      team_id: org ? user.team_id : ws.team.id,
      team_domain: org ? domainOf(user.team_id) : ws.team.domain,
      ...(ws.enterprise && {
        enterprise_id: ws.enterprise.id,
        enterprise_name: ws.enterprise.name,
      }),
      channel_id: ch.id,
      channel_name: ch.is_im ? "directmessage" : ch.name,
      user_id: user.id,
      user_name: user.name,
      command: input.command ?? "/onair",
      text,
      api_app_id: ws.app.appId,
      is_enterprise_install: String(org !== undefined),
      response_url: responseUrl,
      trigger_id: triggerId,
    },
    input,
  );
  // A late answer is not used: Slack has already told the person the command timed out.
  if (r.status === 200 && input.forge === undefined && !r.late) {
    applyCommandAck(ws, ch, user, r.body);
  }
  return { ...r, triggerId, responseUrl };
}

/** What Slack shows for a slash command's ack body: a message, ephemeral unless in_channel. */
function applyCommandAck(ws: Workspace, ch: Channel, user: User, body: unknown): void {
  let msg: Json | undefined;
  if (typeof body === "string" && body.trim() !== "") msg = { text: body };
  else if (isObj(body) && (body.text !== undefined || body.blocks !== undefined)) msg = body;
  if (!msg) return;
  const content = {
    text: typeof msg.text === "string" ? msg.text : undefined,
    blocks: Array.isArray(msg.blocks) ? msg.blocks : undefined,
  };
  try {
    if (msg.response_type === "in_channel") {
      ws.postMessage(ch, ws.app.botUserId, content, { via: "command_ack" });
    } else ws.postEphemeral(ch, user.id, content, "command_ack");
  } catch (err) {
    // Slack shows the user an error instead; the body is in the result for the test to see.
    if (!(err instanceof SlackApiError)) throw err;
  }
}
