import type { WebClient } from "@slack/web-api";
import { buildNoticeModal } from "../blocks/event-form.ts";
import type { ModalView } from "../blocks/kit.ts";
import type { Deps } from "../deps.ts";
import {
  isUserMistake,
  plainMessage,
  USER_ERROR_CODES,
  UserFacingError,
} from "../domain/errors.ts";
import { upstreamCondition } from "./failure.ts";

/** Where a flow started, carried through a modal's private_metadata. */
export interface FlowMeta {
  /** The channel the command ran in, for ephemeral answers; absent from App Home and shortcuts. */
  channel?: string;
  eventId?: string;
  /** On edit: the start as it was when the form opened. */
  originalStart?: number;
  /** On edit: whether the people pickers were shown (not when too many to edit). */
  people?: { panelists: boolean; moderators: boolean };
}

export function encodeMeta(meta: FlowMeta): string {
  return JSON.stringify(meta);
}

/** Slack hands private_metadata back as sent, but a forged submission may carry anything. */
export function decodeMeta(raw: string | undefined): FlowMeta {
  if (!raw) return {};
  try {
    const v = JSON.parse(raw) as Record<string, unknown> | null;
    if (!v || typeof v !== "object") return {};
    const out: FlowMeta = {};
    if (typeof v.channel === "string" && /^[CGD][A-Z0-9]{2,30}$/.test(v.channel)) {
      out.channel = v.channel;
    }
    if (typeof v.eventId === "string" && v.eventId.length <= 128) out.eventId = v.eventId;
    if (typeof v.originalStart === "number") out.originalStart = v.originalStart;
    const p = v.people as { panelists?: unknown; moderators?: unknown } | undefined;
    if (p && typeof p === "object") {
      out.people = { panelists: p.panelists !== false, moderators: p.moderators !== false };
    }
    return out;
  } catch {
    return {};
  }
}

/**
 * Opens a placeholder modal at once (a trigger is valid 3 s), then does the slow work in `build`
 * and replaces the placeholder with its view, or with the failure's plain sentence.
 */
export async function openThenFill(
  deps: Deps,
  client: WebClient,
  triggerId: string,
  title: string,
  build: () => Promise<ModalView>,
): Promise<void> {
  let viewId: string | undefined;
  try {
    const res = await client.views.open({
      trigger_id: triggerId,
      view: buildNoticeModal(title, ":hourglass_flowing_sand: One moment…"),
    });
    viewId = res.view?.id;
  } catch (err) {
    throw new UserFacingError(
      USER_ERROR_CODES.invalid,
      "Slack couldn't open the form in time. Please try again.",
      { cause: err },
    );
  }
  if (!viewId) throw new Error("views.open returned no view id");
  let view: ModalView;
  try {
    view = await build();
  } catch (err) {
    if (isUserMistake(err)) deps.logger.info({ reason: (err as Error).message }, "form refused");
    else if (upstreamCondition(err))
      deps.logger.warn({ upstream: upstreamCondition(err) }, "form not opened");
    else deps.logger.error({ err }, "form not opened");
    view = buildNoticeModal(title, plainMessage(err));
  }
  try {
    await client.views.update({ view_id: viewId, view });
  } catch (err) {
    // The user closed the placeholder meanwhile: nothing is waiting for this view.
    deps.logger.info({ reason: (err as Error).message }, "modal gone before it was filled");
  }
}
