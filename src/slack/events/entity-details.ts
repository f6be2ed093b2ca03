import type { AllMiddlewareArgs, App, SlackEventMiddlewareArgs } from "@slack/bolt";
import { flexpaneEntity } from "../../blocks/work-object.ts";
import { flexpaneFor } from "../../domain/unfurl.ts";
import { actorOf, type ListenerKit } from "../kit.ts";

/**
 * entity_details_requested: someone opened a join link's Work Object (link-shared.ts). The
 * flexpane is answered with entity.presentDetails for the same external_ref, built for that
 * person (domain/unfurl.ts flexpaneFor decides what they may see: the figures only where the
 * card's Attendance rule allows them, the staff links only for the organizer and admins). An
 * event this workspace does not know (or no longer has) answers Slack's `not_found` status.
 */
export function register(app: App, kit: ListenerKit): void {
  app.event(
    "entity_details_requested",
    async ({
      event,
      body,
      client,
      context,
    }: SlackEventMiddlewareArgs<"entity_details_requested"> & AllMiddlewareArgs) => {
      const actor = actorOf(kit, context, event.user, client, body.team_id);
      const eventId = event.external_ref?.id;
      const url = event.app_unfurl_url ?? event.link?.url ?? event.entity_url;
      const info = eventId ? await flexpaneFor(kit.deps, actor, eventId, event.channel) : undefined;
      try {
        await client.entity.presentDetails(
          info
            ? { trigger_id: event.trigger_id, metadata: flexpaneEntity(info, url) }
            : { trigger_id: event.trigger_id, error: { status: "not_found" } },
        );
      } catch (err) {
        kit.deps.logger.warn(
          { err, team: actor.team, eventId },
          "flexpane: Slack refused the Work Object's details",
        );
      }
    },
  );
}
