import type { AllMiddlewareArgs, App, SlackEventMiddlewareArgs } from "@slack/bolt";
import type { WebClient } from "@slack/web-api";
import { unfurlBlocks } from "../../blocks/unfurl.ts";
import { workObjectEntity } from "../../blocks/work-object.ts";
import type { Deps } from "../../deps.ts";
import { type UnfurlInfo, unfurlsFor } from "../../domain/unfurl.ts";
import { isPlatformError, slackErrorName } from "../../slack-errors.ts";
import type { ListenerKit } from "../kit.ts";

/**
 * link_shared for the events service's join link host (the manifest's unfurl domain): the
 * links that are join links of this workspace's known events unfurl as Work Objects
 * (chat.unfurl `metadata.entities`, src/blocks/work-object.ts), attendees now only in a channel
 * the event notifies; any other link gets nothing.
 *
 * Work Objects are an app setting Slack may not have on (no manifest key turns it on). Where
 * Slack refuses them (an error, or `ok` with a warning and entities dropped), the links it did
 * not take are unfurled once more as the compact card (src/blocks/unfurl.ts), so each link
 * unfurls once, never both ways. A workspace that refused is sent the card straight away for a
 * while, not asked twice for every link.
 */

/** How long a refusal of Work Objects is remembered per workspace. */
const REFUSAL_MEMORY_MS = 10 * 60_000;
const refusals = new WeakMap<Deps, Map<string, number>>();

function refusedLately(deps: Deps, team: string): boolean {
  const until = refusals.get(deps)?.get(team);
  return until !== undefined && until > deps.now();
}

function rememberRefusal(deps: Deps, team: string): void {
  let m = refusals.get(deps);
  if (!m) {
    m = new Map();
    refusals.set(deps, m);
  }
  m.set(team, deps.now() + REFUSAL_MEMORY_MS);
}

type Target =
  | { unfurl_id: string; source: "conversations_history" | "composer" }
  | { channel: string; ts: string };

/**
 * The entities Slack dropped, by index, from an `ok` answer's warning: those its messages name
 * (`/metadata/entities/N`), or all of them when it names none (Work Objects off).
 */
export function droppedEntities(
  answer: { warning?: string; response_metadata?: { warnings?: string[]; messages?: string[] } },
  count: number,
): Set<number> {
  const warned =
    answer.warning !== undefined || (answer.response_metadata?.warnings?.length ?? 0) > 0;
  if (!warned) return new Set();
  const named = new Set<number>();
  for (const m of answer.response_metadata?.messages ?? []) {
    for (const hit of m.matchAll(/\/metadata\/entities\/(\d+)/g)) named.add(Number(hit[1]));
  }
  return named.size > 0 ? named : new Set(Array.from({ length: count }, (_, i) => i));
}

/** Unfurls as Work Objects; answers the URLs Slack did not take as such. */
async function asWorkObjects(
  kit: ListenerKit,
  client: WebClient,
  team: string,
  target: Target,
  found: ReadonlyArray<[string, UnfurlInfo]>,
): Promise<string[]> {
  const entities = found.map(([url, info]) => workObjectEntity(info, url));
  try {
    const answer = await client.chat.unfurl({ ...target, metadata: { entities } } as Parameters<
      WebClient["chat"]["unfurl"]
    >[0]);
    const dropped = droppedEntities(answer as Parameters<typeof droppedEntities>[0], found.length);
    if (dropped.size === found.length) rememberRefusal(kit.deps, team);
    if (dropped.size > 0) {
      kit.deps.logger.info(
        { team, dropped: dropped.size, messages: answer.response_metadata?.messages },
        "unfurl: Slack dropped Work Objects; those links unfurl as a card",
      );
    }
    return found.filter((_, i) => dropped.has(i)).map(([url]) => url);
  } catch (err) {
    // Slack's answer is remembered; a call that got no answer says nothing of the setting.
    if (isPlatformError(err)) rememberRefusal(kit.deps, team);
    kit.deps.logger.info(
      { team, error: slackErrorName(err) ?? String(err) },
      "unfurl: Slack refused the Work Objects; the links unfurl as a card",
    );
    return found.map(([url]) => url);
  }
}

export function register(app: App, kit: ListenerKit): void {
  app.event(
    "link_shared",
    async ({
      event,
      body,
      client,
      context,
    }: SlackEventMiddlewareArgs<"link_shared"> & AllMiddlewareArgs) => {
      const team = context.teamId ?? body.team_id;
      if (!team) return;
      const urls = (event.links ?? []).map((l) => l.url);
      const found = await unfurlsFor(kit.deps, team, urls, event.channel);
      if (found.size === 0) return;
      const ev = event as typeof event & { unfurl_id?: string; source?: string };
      const target: Target =
        ev.unfurl_id && ev.source
          ? { unfurl_id: ev.unfurl_id, source: ev.source as "conversations_history" }
          : { channel: event.channel, ts: event.message_ts };
      const all = [...found];
      const asCard = refusedLately(kit.deps, team)
        ? all.map(([url]) => url)
        : await asWorkObjects(kit, client, team, target, all);
      if (asCard.length === 0) return;
      const unfurls: Record<string, { blocks: ReturnType<typeof unfurlBlocks>["blocks"] }> = {};
      for (const url of asCard) {
        const info = found.get(url);
        if (info) unfurls[url] = unfurlBlocks(info);
      }
      try {
        await client.chat.unfurl({ ...target, unfurls });
      } catch (err) {
        kit.deps.logger.warn({ err, channel: event.channel }, "unfurl: Slack refused the unfurl");
      }
    },
  );
}
