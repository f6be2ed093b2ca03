import type { AllMiddlewareArgs, App, BlockAction, SlackActionMiddlewareArgs } from "@slack/bolt";
import { HOME_ACTIONS } from "../../ids.ts";
import { reportFailure } from "../failure.ts";
import { actorOf, type ListenerKit } from "../kit.ts";
import { tellUser } from "../reply.ts";
import { openSettings } from "../views/settings.ts";

/** App Home's Settings button: the settings modal (admins only). */
export function register(app: App, kit: ListenerKit): void {
  app.action<BlockAction>(
    HOME_ACTIONS.settings,
    async ({
      ack,
      body,
      client,
      context,
    }: SlackActionMiddlewareArgs<BlockAction> & AllMiddlewareArgs) => {
      await ack();
      const actor = actorOf(kit, context, body.user.id, client, body.team?.id);
      await openSettings(kit, client, actor, body.trigger_id).catch((err: unknown) =>
        reportFailure(kit.deps, "settings button", err, (text) =>
          tellUser(client, actor.user, { text }),
        ),
      );
    },
  );
}
