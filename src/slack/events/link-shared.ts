import type { AllMiddlewareArgs, App, SlackEventMiddlewareArgs } from "@slack/bolt";
import { unfurlBlocks } from "../../blocks/unfurl.ts";
import { unfurlsFor } from "../../domain/unfurl.ts";
import type { ListenerKit } from "../kit.ts";

/**
 * link_shared for the events service's join link host (the manifest's unfurl domain): the
 * links that are join links of this workspace's known events get a compact live card
 * (chat.unfurl): attendees now only in a channel the event notifies; any other link gets nothing.
 */
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
      const unfurls: Record<string, { blocks: ReturnType<typeof unfurlBlocks>["blocks"] }> = {};
      for (const [url, info] of found) unfurls[url] = unfurlBlocks(info);
      const ev = event as typeof event & { unfurl_id?: string; source?: string };
      try {
        await client.chat.unfurl(
          ev.unfurl_id && ev.source
            ? { unfurl_id: ev.unfurl_id, source: ev.source as "conversations_history", unfurls }
            : { channel: event.channel, ts: event.message_ts, unfurls },
        );
      } catch (err) {
        kit.deps.logger.warn({ err, channel: event.channel }, "unfurl: Slack refused the unfurl");
      }
    },
  );
}
