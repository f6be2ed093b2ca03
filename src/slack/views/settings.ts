import type { AllMiddlewareArgs, App, SlackViewMiddlewareArgs } from "@slack/bolt";
import type { WebClient } from "@slack/web-api";
import {
  type CheckOutcome,
  decodeSettingsMeta,
  SETTINGS_TITLE,
  type SettingsMeta,
  servicesInWords,
  settingsView,
} from "../../blocks/settings.ts";
import {
  applySettingsForm,
  readSettingsForm,
  type SettingsChange,
  type SettingsForm,
  unconfirmedFailures,
  type ViewStateValues,
} from "../../blocks/settings-form.ts";
import type { Deps } from "../../deps.ts";
import { requireAdmin, withDefaultCredentials } from "../../domain/access.ts";
import type { Actor } from "../../domain/directory.ts";
import { saveSettings, startSettings } from "../../domain/settings.ts";
import { SETTINGS_BLOCKS, SETTINGS_FIELDS, SETTINGS_VIEW } from "../../ids.ts";
import type { Settings } from "../../store/index.ts";
import { reportFailure } from "../failure.ts";
import { actorOf, type ListenerKit } from "../kit.ts";
import { openThenFill } from "../modal.ts";
import { tellUser } from "../reply.ts";
import { claimSubmission, unavailableText } from "./once.ts";

/** usergroups.list must not hold the modal past its trigger; without it the groups are missing. */
export const USERGROUPS_BUDGET_MS = 1_000;

/** The settings modal, as it stands (effective settings, the workspace's groups, a check). */
export async function renderSettings(
  kit: ListenerKit,
  client: WebClient,
  actor: Actor,
  meta: SettingsMeta,
  check?: CheckOutcome,
) {
  const [settings, usergroups] = await Promise.all([
    startSettings(kit.deps, actor),
    kit.caches.usergroups(actor.team, client, USERGROUPS_BUDGET_MS),
  ]);
  return settingsView({ settings, usergroups, meta, check, sandboxed: kit.deps.sandboxed });
}

/**
 * `/onair settings` and App Home: admins only (a member is refused before any modal opens); the
 * modal opens at once inside the trigger's 3 s, and the form, which reads the store and the
 * workspace's user groups, replaces its placeholder.
 */
export async function openSettings(
  kit: ListenerKit,
  client: WebClient,
  actor: Actor,
  triggerId: string,
  channel?: string,
): Promise<void> {
  await requireAdmin(actor);
  await openThenFill(kit.deps, client, triggerId, SETTINGS_TITLE, () =>
    renderSettings(kit, client, actor, channel ? { channel } : {}),
  );
}

/**
 * What the admin changed, against what the form showed them (the stored settings with the
 * sandbox's defaults filled in): a default shown and saved back unchanged is no change.
 */
function changedFromShown(deps: Deps, stored: Settings, form: SettingsForm): SettingsChange[] {
  const shown = applySettingsForm(withDefaultCredentials(deps, stored), form);
  return shown.ok ? shown.changed : [];
}

export function register(app: App, kit: ListenerKit): void {
  const { deps } = kit;
  app.view(
    SETTINGS_VIEW,
    async ({ ack, body, view, client, context }: SlackViewMiddlewareArgs & AllMiddlewareArgs) => {
      const actor = actorOf(kit, context, body.user.id, client, body.team?.id);
      // Only the store is read before the ack: Slack gives a submission 3 s.
      let stored: Settings;
      try {
        stored = await deps.store.settings.getOrDefault(actor.team);
      } catch (err) {
        deps.logger.error({ err }, "could not read the settings to save them");
        await ack({
          response_action: "errors",
          errors: {
            [SETTINGS_FIELDS.eventsKey]:
              "On Air could not read its settings just now, so nothing was saved. Try Save again in a minute.",
          },
        });
        return;
      }
      const form = readSettingsForm((view.state?.values ?? {}) as ViewStateValues);
      const result = applySettingsForm(stored, form);
      if (!result.ok) {
        await ack({ response_action: "errors", errors: result.errors });
        return;
      }
      const meta = decodeSettingsMeta(view.private_metadata);
      const changed = changedFromShown(deps, stored, form);
      const unconfirmed = unconfirmedFailures(meta.failed ?? [], changed, form);
      if (unconfirmed.length > 0) {
        await ack({
          response_action: "errors",
          errors: {
            [SETTINGS_BLOCKS.saveAnyway]: `Check just failed for the ${servicesInWords(unconfirmed)} you typed, so nothing was saved. Fix them and press Check again, or tick this box to save them anyway.`,
          },
        });
        return;
      }
      const claim = await claimSubmission(deps, actor.team, view);
      if (claim === "unavailable") {
        await ack({
          response_action: "errors",
          errors: { [SETTINGS_FIELDS.eventsKey]: unavailableText("Save") },
        });
        return;
      }
      await ack();
      if (claim === "repeat") return;
      const tell = (text: string) => tellUser(client, actor.user, { text }, meta.channel);
      try {
        // The modal only opens for admins; a forged submission from anyone else changes nothing.
        await saveSettings(deps, actor, result.settings, changed);
        await tell(
          "On Air's settings are saved. Run `/onair settings` and press Check to test the credentials.",
        );
      } catch (err) {
        await reportFailure(deps, "settings", err, tell);
      }
    },
  );
}
