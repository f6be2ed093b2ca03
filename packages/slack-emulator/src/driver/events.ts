import { randomHex } from "../ids.ts";
import { recordSharedLinks } from "../methods/files.ts";
import { uninstall as revokeAll } from "../oauth.ts";
import type { Json } from "../workspace.ts";
import type { DriverContext } from "./context.ts";
import { DriverError } from "./state.ts";
import type {
  DriverResult,
  EventInput,
  PostMessageInput,
  SendOptions,
  UninstallOptions,
} from "./types.ts";

/**
 * Events API callbacks as Slack sends them (with the org-wide install's team fields), what a
 * person posting a link sets off (link_shared), the uninstall, and the URL verification.
 */

/** Links in message text (`<url>`, `<url|label>` or bare) whose host is an unfurl domain. */
function linksIn(text: string, domains: readonly string[]): Array<{ domain: string; url: string }> {
  const out: Array<{ domain: string; url: string }> = [];
  for (const m of text.matchAll(/<(https?:\/\/[^|>\s]+)(?:\|[^>]*)?>|(https?:\/\/[^\s<>]+)/g)) {
    const url = m[1] ?? m[2] ?? "";
    let host: string;
    try {
      host = new URL(url).hostname.toLowerCase();
    } catch {
      continue;
    }
    const domain = domains.find((d) => host === d || host.endsWith(`.${d}`));
    if (domain && !out.some((l) => l.url === url)) out.push({ domain: host, url });
  }
  return out;
}

export async function postMessage(ctx: DriverContext, input: PostMessageInput) {
  const { ws, userOf, channelOf } = ctx;
  const user = userOf(input.user);
  const ch = channelOf(input.channel);
  if (!ch.members.has(user.id)) throw new DriverError(`${user.name} is not in ${ch.name}`);
  const msg = ws.postMessage(ch, user.id, { text: input.text }, { via: "driver" });
  const links = linksIn(input.text, input.unfurlDomains ?? []);
  if (links.length === 0) return { ts: msg.ts };
  const unfurlId = recordSharedLinks(
    ws,
    ch.id,
    msg.ts,
    links.map((l) => l.url),
  );
  const result = await eventCallback(
    ctx,
    {
      type: "link_shared",
      channel: ch.id,
      is_bot_user_member: ch.members.has(ws.app.botUserId),
      user: user.id,
      message_ts: msg.ts,
      unfurl_id: unfurlId,
      source: "conversations_history",
      links,
    },
    input,
  );
  return { ts: msg.ts, unfurlId, result };
}

export async function eventCallback(
  ctx: DriverContext,
  event: EventInput,
  o: SendOptions & { team?: string } = {},
): Promise<DriverResult> {
  const { ws, now, userOf, org, actionTs, deliverEvent } = ctx;
  const { team: teamOpt, ...eo } = o;
  const ev: Json = { ...event };
  if (event.type === "app_home_opened") {
    const user = userOf(String(event.user));
    ev.user = user.id;
    ev.channel ??= ws.dmWith(user.id).id;
    ev.tab ??= "home";
    const home = ws.homeView(user.id);
    if (home && ev.view === undefined && ev.tab === "home") ev.view = ws.viewJson(home);
  }
  ev.event_ts ??= actionTs();
  // The workspace the event happened in: the one asked for, else the person's own; an
  // org-level event (an org-wide uninstall) names the enterprise and no workspace.
  const actor = typeof ev.user === "string" ? ws.user(ev.user) : undefined;
  const where = teamOpt ?? (org ? (actor?.team_id ?? ws.team.id) : ws.team.id);
  const orgLevel = org !== undefined && where === org.id;
  const payload: Json = {
    token: ws.verificationToken,
    team_id: where,
    ...(ws.enterprise && { enterprise_id: ws.enterprise.id }),
    ...(!orgLevel && { context_team_id: where }),
    ...(ws.enterprise && { context_enterprise_id: ws.enterprise.id }),
    api_app_id: ws.app.appId,
    event: ev,
    type: "event_callback",
    event_id: `Ev${randomHex(5).toUpperCase()}`,
    event_time: Math.floor(now() / 1000),
    authorizations: [
      {
        enterprise_id: ws.enterprise?.id ?? null,
        team_id: org ? null : ws.team.id,
        user_id: ws.app.botUserId,
        is_bot: true,
        is_enterprise_install: org !== undefined,
      },
    ],
    is_ext_shared_channel: false,
    event_context: `4-${randomHex(16)}`,
  };
  return deliverEvent(payload, eo);
}

export async function uninstall(
  ctx: DriverContext,
  o: UninstallOptions = {},
): Promise<DriverResult[]> {
  const { ws, org } = ctx;
  // One workspace of an org-wide install: the org's tokens stay, that workspace is told.
  if (org && o.team !== undefined && o.team !== org.id) {
    return [await eventCallback(ctx, { type: "app_uninstalled" }, { team: o.team })];
  }
  const revoked = revokeAll(ws);
  const events = [
    { type: "app_uninstalled" },
    { type: "tokens_revoked", tokens: { oauth: revoked.oauth, bot: revoked.bot } },
  ];
  if (o.order === "tokens_revoked-first") events.reverse();
  const out: DriverResult[] = [];
  for (const e of events) out.push(await eventCallback(ctx, e, org ? { team: org.id } : {}));
  return out;
}

export async function urlVerification(
  ctx: DriverContext,
  challenge = randomHex(16),
  o: SendOptions = {},
): Promise<DriverResult> {
  const { ws, sendEvent } = ctx;
  return sendEvent({ token: ws.verificationToken, challenge, type: "url_verification" }, o);
}
