import type { WebClient } from "@slack/web-api";
import type { Deps } from "../../deps.ts";
import { EventsError } from "../../upstream/errors.ts";
import { withUserToken } from "../access.ts";
import { buildCancelConfirm } from "../blocks/dialogs.ts";
import {
  afterChange,
  audit,
  decodeMeta,
  encodeMeta,
  fetchEvent,
  openThenFill,
  organizerLink,
  ownedRecord,
  patchRecord,
  plainMessage,
  reportFailure,
  tellUser,
} from "./common.ts";
import { publishHome } from "./home.ts";
import { live } from "./live.ts";

/** Cancel asks first: a confirmation modal opened at once, filled once the event is read. */
export async function openCancelConfirm(
  deps: Deps,
  client: WebClient,
  args: { team: string; user: string; triggerId: string; eventId: string; channel?: string },
): Promise<void> {
  await openThenFill(deps, client, args.triggerId, "Cancel event?", async () => {
    const record = await ownedRecord(deps, args.team, args.user, args.eventId);
    const link = await organizerLink(deps, args.team, record);
    const event = await fetchEvent(deps, args.team, link, record);
    return buildCancelConfirm(
      event,
      encodeMeta({ eventId: event.id, ...(args.channel ? { channel: args.channel } : {}) }),
    );
  });
}

/** The confirmation's submit: DELETE, then webhooks, reminders and cards via the live area. */
export async function confirmCancel(
  deps: Deps,
  client: WebClient,
  args: { team: string; user: string; privateMetadata: string },
): Promise<void> {
  const meta = decodeMeta(args.privateMetadata);
  try {
    const record = await ownedRecord(deps, args.team, args.user, meta.eventId ?? "");
    const link = await organizerLink(deps, args.team, record);
    await withUserToken(deps, args.team, link, async (t) => {
      try {
        await deps.events.deleteEvent(t.accessToken, t.userId, record.eventId);
      } catch (err) {
        // Already gone upstream: the cancel's aim holds, so the local clean-up still runs.
        if (!(err instanceof EventsError && err.status === 404)) throw err;
      }
    });
    await patchRecord(deps, args.team, record.eventId, { cancelled: true });
    const failed = await afterChange(deps, "cancel follow-up", () =>
      live.onEventCancelled(deps, args.team, record.eventId),
    );
    const title = (record.title ?? record.eventId).slice(0, 200);
    const text = failed
      ? `:wastebasket: Cancelled *${title}* on the live events service, but its channel cards and reminders could not all be cleaned up: ${plainMessage(failed)}`
      : `:wastebasket: Cancelled *${title}*. Its channel cards say so and its reminders are off.`;
    await tellUser(client, args.user, { text }, meta.channel);
    await audit(
      deps,
      args.team,
      { actor: args.user, action: "event.cancel", target: record.eventId, details: { title } },
      `<@${args.user}> cancelled *${title}* (\`${record.eventId}\`).`,
    );
    await publishHome(deps, client, args.team, args.user);
  } catch (err) {
    await reportFailure(deps, client, args.user, err, "cancel", meta.channel);
  }
}
