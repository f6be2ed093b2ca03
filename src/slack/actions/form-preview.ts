import type { AllMiddlewareArgs, App, BlockAction, SlackActionMiddlewareArgs } from "@slack/bolt";
import type { WebClient } from "@slack/web-api";
import { readEventForm } from "../../blocks/event-form-read.ts";
import type { KnownBlock, ModalView } from "../../blocks/kit.ts";
import { recurrencePreview } from "../../blocks/recurrence.ts";
import type { ViewStateValues } from "../../blocks/view-state.ts";
import { EVENT_BLOCKS, EVENT_FIELDS, VIEWS } from "../../ids.ts";
import { isPlatformError } from "../../slack-errors.ts";
import type { ListenerKit } from "../kit.ts";

interface OpenView {
  id: string;
  hash: string;
  callback_id: string;
  private_metadata: string;
  title: unknown;
  submit?: unknown;
  close?: unknown;
  blocks: unknown[];
  state: { values: unknown };
}

/** A dispatch_action on start, zone or recurrence: rewrite the preview in place. */
async function refreshPreview(client: WebClient, view: OpenView): Promise<void> {
  const values = readEventForm(view.state.values as ViewStateValues);
  const blocks = (view.blocks as KnownBlock[]).map((b) =>
    b.block_id === EVENT_BLOCKS.preview
      ? ({
          type: "context",
          block_id: EVENT_BLOCKS.preview,
          elements: [{ type: "mrkdwn", text: recurrencePreview(values) }],
        } as KnownBlock)
      : b,
  );
  const next = {
    type: "modal",
    callback_id: view.callback_id,
    private_metadata: view.private_metadata,
    title: view.title,
    ...(view.submit ? { submit: view.submit } : {}),
    ...(view.close ? { close: view.close } : {}),
    blocks,
  } as ModalView;
  try {
    await client.views.update({ view_id: view.id, hash: view.hash, view: next });
  } catch (err) {
    // hash_conflict: the user typed on; the next change refreshes the preview again.
    if (!isPlatformError(err)) throw err;
  }
}

/** The schedule form's fields that change the recurrence preview. */
export function register(app: App, kit: ListenerKit): void {
  for (const id of [
    EVENT_FIELDS.start,
    EVENT_FIELDS.timezone,
    EVENT_FIELDS.recurrence,
    EVENT_FIELDS.count,
    EVENT_FIELDS.frequency,
    EVENT_FIELDS.until,
  ]) {
    app.action<BlockAction>(
      id,
      async ({ ack, body, client }: SlackActionMiddlewareArgs<BlockAction> & AllMiddlewareArgs) => {
        await ack();
        const view = body.view;
        if (!view || view.callback_id !== VIEWS.event) return;
        await refreshPreview(client, view as unknown as OpenView).catch((err: unknown) =>
          kit.deps.logger.warn({ err }, "preview not refreshed"),
        );
      },
    );
  }
}
