import type { AllMiddlewareArgs, App, BlockAction, SlackActionMiddlewareArgs } from "@slack/bolt";
import type { WebClient } from "@slack/web-api";
import {
  type CheckOutcome,
  checkLine,
  decodeSettingsMeta,
  type SettingsMeta,
} from "../../blocks/settings.ts";
import { readSettingsForm, type ViewStateValues } from "../../blocks/settings-form.ts";
import { userMessageOf } from "../../domain/errors.ts";
import { checkCredentials } from "../../domain/settings.ts";
import { SETTINGS_ACTIONS } from "../../ids.ts";
import { actorOf, type ListenerKit } from "../kit.ts";
import { botScopes } from "../scopes.ts";
import { renderSettings } from "../views/settings.ts";

/**
 * The app's Slack permissions against what it asks for (scopes.ts): a workspace installed before
 * a scope was added keeps the old set until an admin reinstalls, and what needs the new one
 * (crash recovery reads history) quietly does less meanwhile.
 */
export async function checkSlackScopes(kit: ListenerKit, client: WebClient): Promise<string> {
  try {
    const res = await client.auth.test();
    const granted = new Set(res.response_metadata?.scopes ?? []);
    const wanted = botScopes();
    if (granted.size === 0) {
      return checkLine(true, "Slack", "connected (Slack did not list the app's permissions).");
    }
    const missing = wanted.filter((s) => !granted.has(s));
    if (missing.length === 0) {
      return checkLine(
        true,
        "Slack",
        `all ${wanted.length} permissions the app asks for are granted.`,
      );
    }
    const install = `${kit.deps.config.publicUrl.replace(/\/+$/, "")}/slack/install`;
    return checkLine(
      false,
      "Slack",
      `this workspace has not granted ${missing.join(", ")}. Reinstall the app to grant ${
        missing.length === 1 ? "it" : "them"
      } (${install}, or "Reinstall to Workspace" on the app's Slack settings page).`,
    );
  } catch (err) {
    kit.deps.logger.info({ err }, "settings check: Slack failed");
    return checkLine(false, "Slack", userMessageOf(err));
  }
}

/** The settings modal's Check button: the credentials as typed, and the app's Slack permissions. */
export function register(app: App, kit: ListenerKit): void {
  app.action<BlockAction>(
    SETTINGS_ACTIONS.check,
    async ({
      ack,
      body,
      client,
      context,
    }: SlackActionMiddlewareArgs<BlockAction> & AllMiddlewareArgs) => {
      await ack();
      const view = body.view;
      if (!view) return;
      const actor = actorOf(kit, context, body.user.id, client, body.team?.id);
      const meta = decodeSettingsMeta(view.private_metadata);
      const render = async (check: CheckOutcome, shownMeta: SettingsMeta = meta) => {
        // Same block ids: Slack keeps what the admin has typed so far.
        const next = await renderSettings(kit, client, actor, shownMeta, check);
        await client.views.update({ view_id: view.id, view: next });
      };
      try {
        await render("running");
        const form = readSettingsForm(view.state.values as ViewStateValues);
        const [upstream, slack] = await Promise.all([
          checkCredentials(kit.deps, actor, form),
          checkSlackScopes(kit, client),
        ]);
        // Save asks before storing credentials this Check just found wrong (the form's meta
        // carries which, since the values typed are never sent back to the app).
        const failed = upstream.flatMap((l) => (l.ok || !l.id ? [] : [l.id]));
        const { failed: _before, ...rest } = meta;
        await render(
          { lines: [...upstream.map((l) => checkLine(l.ok, l.service, l.detail)), slack] },
          failed.length > 0 ? { ...rest, failed } : rest,
        );
      } catch (err) {
        kit.deps.logger.info({ err }, "settings check refused or failed");
        await render({ lines: [checkLine(false, "Check", userMessageOf(err))] }).catch(
          (e: unknown) => kit.deps.logger.warn({ err: e }, "could not show the check's outcome"),
        );
      }
    },
  );
}
