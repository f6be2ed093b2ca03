import type { WebClient } from "@slack/web-api";
import { buildCancelConfirm } from "../../blocks/dialogs.ts";
import { startCancelling } from "../../domain/cancel.ts";
import type { Actor } from "../../domain/directory.ts";
import type { ListenerKit } from "../kit.ts";
import { encodeMeta, openThenFill } from "../modal.ts";

/** Cancel asks first: a confirmation modal opened at once, filled once the event is read. */
export async function openCancelConfirm(
  kit: ListenerKit,
  client: WebClient,
  actor: Actor,
  triggerId: string,
  eventId: string,
  channel?: string,
): Promise<void> {
  await openThenFill(kit.deps, client, triggerId, "Cancel event?", async () => {
    const event = await startCancelling(kit.deps, actor, eventId);
    return buildCancelConfirm(
      event,
      encodeMeta({ eventId: event.id, ...(channel ? { channel } : {}) }),
    );
  });
}
