import type { AllMiddlewareArgs, BlockAction, SlackActionMiddlewareArgs } from "@slack/bolt";
import type { WebClient } from "@slack/web-api";
import type { Actor } from "../../domain/directory.ts";
import { reportFailure } from "../failure.ts";
import { actorOf, type ListenerKit } from "../kit.ts";
import { tellUser } from "../reply.ts";
import { actionValue, sourceChannel } from "./payload.ts";

export type ActionArgs = SlackActionMiddlewareArgs<BlockAction> & AllMiddlewareArgs;
export type Opener = (
  kit: ListenerKit,
  client: WebClient,
  actor: Actor,
  triggerId: string,
  eventId: string,
  channel?: string,
) => Promise<void>;

/**
 * The event buttons that open a form (on the card, in `/onair list`, on App Home): Edit, Cancel,
 * Notify a channel. Each form checks who may act before it shows anything (organizer or admin).
 */
export function eventOpener(kit: ListenerKit, what: string, open: Opener, eventIdOf = actionValue) {
  return async ({ ack, body, client, context }: ActionArgs) => {
    await ack();
    const channel = sourceChannel(body);
    const actor = actorOf(kit, context, body.user.id, client, body.team?.id);
    await open(kit, client, actor, body.trigger_id, eventIdOf(body), channel).catch(
      (err: unknown) =>
        reportFailure(kit.deps, what, err, (text) =>
          tellUser(client, actor.user, { text }, channel),
        ),
    );
  };
}
