import type { AllMiddlewareArgs, App, BlockAction, SlackActionMiddlewareArgs } from "@slack/bolt";
import { HOME_ACTIONS } from "../../ids.ts";
import { reportFailure } from "../failure.ts";
import { actorOf, type ListenerKit } from "../kit.ts";
import { tellUser } from "../reply.ts";
import { openTokenForm } from "../views/token-form.ts";

/** App Home's Mint button: the token form. */
export function register(app: App, kit: ListenerKit): void {
  app.action<BlockAction>(
    HOME_ACTIONS.token,
    async ({
      ack,
      body,
      client,
      context,
    }: SlackActionMiddlewareArgs<BlockAction> & AllMiddlewareArgs) => {
      await ack();
      const actor = actorOf(kit, context, body.user.id, client, body.team?.id);
      await openTokenForm(kit, client, actor, body.trigger_id).catch((err: unknown) =>
        reportFailure(kit.deps, "token button", err, (text) =>
          tellUser(client, actor.user, { text }),
        ),
      );
    },
  );
}
