import type { App } from "@slack/bolt";
import { SHORTCUTS } from "../../ids.ts";
import { reportFailure } from "../failure.ts";
import { actorOf, type ListenerKit } from "../kit.ts";
import { tellUser } from "../reply.ts";
import { openScheduleForm } from "../views/event-form.ts";

/** The global shortcut "Schedule a live event": the schedule form. */
export function register(app: App, kit: ListenerKit): void {
  app.shortcut(SHORTCUTS.scheduleEvent.callbackId, async ({ ack, body, client, context }) => {
    await ack();
    const actor = actorOf(kit, context, body.user.id, client, body.team?.id);
    await openScheduleForm(kit, client, actor, body.trigger_id).catch((err: unknown) =>
      reportFailure(kit.deps, "schedule shortcut", err, (text) =>
        tellUser(client, actor.user, { text }),
      ),
    );
  });
}
