import type { AllMiddlewareArgs, App, BlockAction, SlackActionMiddlewareArgs } from "@slack/bolt";
import type { Deps } from "../deps.ts";
import { slackProfile, USER_ERROR_CODES, UserFacingError } from "../slack/access.ts";
import { CARD_ACTIONS } from "../slack/blocks/ids.ts";
import { escapeMrkdwn, truncate } from "../slack/blocks/kit.ts";
import type { CommandContext, CommandRouter } from "../slack/router.ts";
import { userMessageOf } from "../slack/router.ts";
import type { EventRecord, NoiseLevel } from "../store/index.ts";
import { NOISE_WORDS, parseNoise } from "./digest.ts";
import { muteChannel, subscribeChannel } from "./lifecycle.ts";
import { liveRepo } from "./records.ts";
import { liveWorker } from "./runtime.ts";
import { EventLive } from "./state.ts";

/** `<#C123|name>`, `<#C123>` (Slack escapes channels in commands) or a bare channel id. */
const CHANNEL_REF = /^<#([CGD][A-Z0-9]{2,})(?:\|[^>]*)?>$|^([CG][A-Z0-9]{6,})$/;

export interface NotifyArgs {
  query: string;
  channel: string | undefined;
  noise: NoiseLevel | undefined;
}

/** `<event words…> [#channel] [noise]`, in any order after the event. */
export function parseNotifyArgs(text: string): NotifyArgs {
  const words = text.split(/\s+/).filter(Boolean);
  let channel: string | undefined;
  let noise: NoiseLevel | undefined;
  const rest: string[] = [];
  for (const w of words) {
    const m = CHANNEL_REF.exec(w);
    if (m && !channel) channel = m[1] ?? m[2];
    else if (rest.length > 0 && !noise && parseNoise(w)) noise = parseNoise(w);
    else if (w.startsWith("#") && w.length > 1) {
      throw new UserFacingError(
        USER_ERROR_CODES.invalid,
        `I couldn't read the channel ${escapeMrkdwn(truncate(w, 40))}. Pick it from Slack's suggestions as you type # so it becomes a link.`,
      );
    } else rest.push(w);
  }
  return { query: rest.join(" ").replace(/^["“'`]+|["”'`]+$/g, ""), channel, noise };
}

/** An event by id (any in the team), or by an unambiguous title start among the user's own. */
export async function findEvent(
  deps: Deps,
  team: string,
  user: string,
  query: string,
  usage: string,
): Promise<EventRecord> {
  if (query === "") {
    throw new UserFacingError(
      USER_ERROR_CODES.invalid,
      `Say which event: \`${usage}\`. \`/onair list\` shows your events and their ids.`,
    );
  }
  if (!query.includes(":")) {
    const byId = await deps.store.events.get(team, query);
    if (byId && !byId.cancelled) return byId;
  }
  const lower = query.toLowerCase();
  const mine = (await deps.store.events.list(team)).filter(
    (r) => r.organizer === user && !r.cancelled,
  );
  const exact = mine.filter((r) => (r.title ?? "").toLowerCase() === lower);
  const matches =
    exact.length > 0 ? exact : mine.filter((r) => (r.title ?? "").toLowerCase().startsWith(lower));
  if (matches.length === 1 && matches[0]) return matches[0];
  if (matches.length > 1) {
    const ids = matches
      .slice(0, 5)
      .map((m) => `\`${m.eventId}\``)
      .join(", ");
    throw new UserFacingError(
      USER_ERROR_CODES.invalid,
      `Several of your events start with “${escapeMrkdwn(truncate(query, 60))}”. Use the id instead: ${ids}.`,
    );
  }
  throw new UserFacingError(
    USER_ERROR_CODES.notFound,
    `I don't know an event “${escapeMrkdwn(truncate(query, 60))}”. Run \`/onair list\` to see yours and their ids.`,
  );
}

async function notifyCommand(deps: Deps, ctx: CommandContext): Promise<void> {
  const args = parseNotifyArgs(ctx.args);
  const record = await findEvent(
    deps,
    ctx.teamId,
    ctx.userId,
    args.query,
    "/onair notify <event> [#channel]",
  );
  if (record.organizer !== ctx.userId && !(await slackProfile(ctx.client, ctx.userId)).isAdmin) {
    throw new UserFacingError(
      USER_ERROR_CODES.notAllowed,
      `Only the organizer, <@${record.organizer}>, or a workspace admin can send this event's live notices to a channel. Ask them to run \`/onair notify\`.`,
    );
  }
  const channel = args.channel ?? ctx.channelId;
  await subscribeChannel(deps, {
    team: ctx.teamId,
    eventId: record.eventId,
    channel,
    user: ctx.userId,
    ...(args.noise ? { noise: args.noise } : {}),
  });
  const title = escapeMrkdwn(truncate(record.title ?? record.eventId, 150));
  const noise = args.noise ? ` Attendee notices: ${NOISE_WORDS[args.noise]}.` : "";
  await ctx.reply(
    `Live notices for *${title}* now go to <#${channel}>.${noise} To stop them there, run \`/onair mute ${record.eventId}\` in that channel.`,
  );
}

async function muteCommand(deps: Deps, ctx: CommandContext): Promise<void> {
  const args = parseNotifyArgs(ctx.args);
  const record = await findEvent(deps, ctx.teamId, ctx.userId, args.query, "/onair mute <event>");
  const channel = args.channel ?? ctx.channelId;
  const title = escapeMrkdwn(truncate(record.title ?? record.eventId, 150));
  const muted = await muteChannel(deps, ctx.teamId, record.eventId, channel);
  await ctx.reply(
    muted
      ? `Live notices for *${title}* are off in <#${channel}>. Run \`/onair notify ${record.eventId}\` here to turn them back on.`
      : `*${title}* sends no live notices to <#${channel}>, so there was nothing to mute.`,
  );
}

/** The card's Attendance button: peak, unique and average minutes of the current instance. */
export async function attendanceText(deps: Deps, team: string, eventId: string): Promise<string> {
  const id = `${team}:${eventId}`;
  const owned = liveWorker(deps)?.runs.get(id);
  const live =
    owned?.live ?? EventLive.from((await deps.store.repository(liveRepo).get(id))?.instances);
  const inst = live.current();
  if (!inst || inst.unique === 0) {
    return "Nobody has joined this event yet. The card updates as soon as people join.";
  }
  const avg = live.averageMinutes(inst, Date.now());
  return `Attendance so far: peak ${inst.peak}, ${inst.unique} unique, ${inst.present} here now, on average ${avg.toFixed(1)} minutes each.`;
}

type ActionArgs = SlackActionMiddlewareArgs<BlockAction> & AllMiddlewareArgs;

/** Registers notify, mute and the card's live actions. */
export function registerLive(app: App, router: CommandRouter, deps: Deps): void {
  router.on("notify", (ctx) => notifyCommand(deps, ctx));
  router.on("mute", (ctx) => muteCommand(deps, ctx));

  app.action<BlockAction>(CARD_ACTIONS.attendance, async ({ ack, body, respond }: ActionArgs) => {
    await ack();
    const action = body.actions[0];
    const eventId = action?.type === "button" ? (action.value ?? "") : "";
    const team = body.team?.id ?? body.user.team_id ?? "";
    let text: string;
    try {
      text = await attendanceText(deps, team, eventId);
    } catch (err) {
      deps.logger.error({ err }, "live: attendance failed");
      text = userMessageOf(err);
    }
    await respond({ response_type: "ephemeral", replace_original: false, text }).catch(
      (err: unknown) => deps.logger.warn({ err }, "live: attendance answer not sent"),
    );
  });
}
