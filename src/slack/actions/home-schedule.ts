import type { AllMiddlewareArgs, App, BlockAction, SlackActionMiddlewareArgs } from "@slack/bolt";
import { HOME_ACTIONS } from "../../ids.ts";
import { reportFailure } from "../failure.ts";
import { actorOf, type ListenerKit } from "../kit.ts";
import { tellUser } from "../reply.ts";
import { openScheduleForm } from "../views/event-form.ts";

/** App Home's Schedule button: the schedule form. */
export function register(app: App, kit: ListenerKit): void {
  app.action<BlockAction>(
    HOME_ACTIONS.schedule,
    async ({
      ack,
      body,
      client,
      context,
    }: SlackActionMiddlewareArgs<BlockAction> & AllMiddlewareArgs) => {
      await ack();
      const actor = actorOf(kit, context, body.user.id, client, body.team?.id);
      await openScheduleForm(kit, client, actor, body.trigger_id).catch((err: unknown) =>
        reportFailure(kit.deps, "schedule button", err, (text) =>
          tellUser(client, actor.user, { text }),
        ),
      );
    },
  );
}
