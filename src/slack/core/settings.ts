import type {
  AllMiddlewareArgs,
  App,
  BlockAction,
  SlackActionMiddlewareArgs,
  SlackViewMiddlewareArgs,
  ViewSubmitAction,
} from "@slack/bolt";
import type { WebClient } from "@slack/web-api";
import type { Deps } from "../../deps.ts";
import type { Settings } from "../../store/index.ts";
import { effectiveSettings, requireAdmin } from "../access.ts";
import type { CommandContext } from "../router.ts";
import { userMessageOf } from "../router.ts";
import { botScopes } from "../scopes.ts";
import { SETTINGS_ACTIONS, SETTINGS_FIELDS, SETTINGS_VIEW } from "./ids.ts";
import {
  applySettingsForm,
  type CheckOutcome,
  checkLine,
  decodeSettingsMeta,
  readSettingsForm,
  type SettingsMeta,
  settingsView,
  type UsergroupChoice,
  type ViewStateValues,
} from "./settings-view.ts";

/** Relay token minted by Check: short-lived, named so an admin recognises it in the token list. */
export const CHECK_TOKEN_MS = 60_000;
export const CHECK_CLIENT_NAME = "On Air check";

/** usergroups.list must not hold the modal past its trigger; without it the groups are missing. */
const USERGROUPS_BUDGET_MS = 1_000;

async function listUsergroups(deps: Deps, client: WebClient): Promise<UsergroupChoice[]> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const res = await Promise.race([
      client.usergroups.list({}),
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), USERGROUPS_BUDGET_MS);
      }),
    ]);
    if (!res) {
      deps.logger.warn("usergroups.list was too slow; the settings modal shows no user groups");
      return [];
    }
    return (res.usergroups ?? []).flatMap((g) =>
      g.id && g.handle && !g.date_delete
        ? [{ id: g.id, handle: g.handle, name: g.name ?? g.handle }]
        : [],
    );
  } catch (err) {
    deps.logger.warn({ err }, "usergroups.list failed; the settings modal shows no user groups");
    return [];
  } finally {
    clearTimeout(timer);
  }
}

/** `/onair settings`: admins only; the modal opens inside the trigger's 3 s, before any upstream call. */
export function settingsCommand(deps: Deps) {
  return async (ctx: CommandContext): Promise<void> => {
    const [, settings, usergroups] = await Promise.all([
      requireAdmin(ctx.client, ctx.userId),
      effectiveSettings(deps, ctx.teamId),
      listUsergroups(deps, ctx.client),
    ]);
    const meta: SettingsMeta = ctx.channelId ? { channel: ctx.channelId } : {};
    await ctx.client.views.open({
      trigger_id: ctx.triggerId,
      view: settingsView({ settings, usergroups, meta, sandboxed: deps.sandboxed }),
    });
  };
}

/**
 * The app's Slack permissions against what it asks for (scopes.ts): a workspace installed before
 * a scope was added keeps the old set until an admin reinstalls, and what needs the new one
 * (crash recovery reads history) quietly does less meanwhile.
 */
export async function checkSlackScopes(deps: Deps, client: WebClient): Promise<string> {
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
    const install = `${deps.config.publicUrl.replace(/\/+$/, "")}/slack/install`;
    return checkLine(
      false,
      "Slack",
      `this workspace has not granted ${missing.join(", ")}. Reinstall the app to grant ${
        missing.length === 1 ? "it" : "them"
      } (${install}, or "Reinstall to Workspace" on the app's Slack settings page).`,
    );
  } catch (err) {
    deps.logger.info({ err }, "settings check: Slack failed");
    return checkLine(false, "Slack", userMessageOf(err));
  }
}

/**
 * Runs the checks with the credentials typed in the modal, or the stored ones where a field is
 * empty: a short relay token and the enterprise self lookup, an enterprise_app grant, and the
 * app's Slack permissions. Nothing is cached: the values may not be saved yet.
 */
export async function checkCredentials(
  deps: Deps,
  team: string,
  values: ViewStateValues,
  client?: WebClient,
): Promise<string[]> {
  const stored = await effectiveSettings(deps, team);
  const form = readSettingsForm(values);
  const username = form.relayUsername ?? stored.relayUsername;
  const password = form.relayPassword ?? stored.relayPassword;
  const key = form.eventsAppKey ?? stored.eventsAppKey;
  const secret = form.eventsAppSecret ?? stored.eventsAppSecret;

  const relay = async (): Promise<string> => {
    if (!username || !password) return checkLine(false, "Relay", "no username and password yet.");
    try {
      const token = await deps.relay.createAccessToken(
        { basic: { username, password } },
        { durationMs: CHECK_TOKEN_MS, clientName: CHECK_CLIENT_NAME },
      );
      const self = await deps.relay.getEnterpriseSelf(token.accessToken);
      return checkLine(
        true,
        "Relay",
        `${self.label} (${self.name}), point of contact ${self.pointOfContact}.`,
      );
    } catch (err) {
      deps.logger.info({ err }, "settings check: relay failed");
      return checkLine(false, "Relay", userMessageOf(err));
    }
  };
  const events = async (): Promise<string> => {
    if (!key || !secret) return checkLine(false, "Events service", "no app key and secret yet.");
    try {
      const grant = await deps.events.grantEnterpriseApp({ clientId: key, clientSecret: secret });
      return checkLine(
        true,
        "Events service",
        `the app key works; enterprise token granted (enterprise ${grant.enterpriseId}).`,
      );
    } catch (err) {
      deps.logger.info({ err }, "settings check: events failed");
      return checkLine(false, "Events service", userMessageOf(err));
    }
  };
  return Promise.all([relay(), events(), ...(client ? [checkSlackScopes(deps, client)] : [])]);
}

type ActionArgs = SlackActionMiddlewareArgs<BlockAction> & AllMiddlewareArgs;
type SubmitArgs = SlackViewMiddlewareArgs<ViewSubmitAction> & AllMiddlewareArgs;

function teamOfBody(body: { team: { id: string } | null; user: { team_id?: string } }): string {
  const team = body.team?.id ?? body.user.team_id;
  if (!team) throw new Error("interactive payload without a team");
  return team;
}

export function registerSettings(app: App, deps: Deps): void {
  app.action(SETTINGS_ACTIONS.check, async (args: ActionArgs) => {
    await args.ack();
    const { body, client } = args;
    const view = body.view;
    if (!view) return;
    const team = teamOfBody(body);
    const render = async (check: CheckOutcome) => {
      const [settings, usergroups] = await Promise.all([
        effectiveSettings(deps, team),
        listUsergroups(deps, client),
      ]);
      const next = settingsView({
        settings,
        usergroups,
        meta: decodeSettingsMeta(view.private_metadata),
        check,
        sandboxed: deps.sandboxed,
      });
      // Same block ids: Slack keeps what the admin has typed so far.
      await client.views.update({ view_id: view.id, view: next });
    };
    try {
      await requireAdmin(client, body.user.id);
      await render("running");
      const lines = await checkCredentials(
        deps,
        team,
        view.state.values as ViewStateValues,
        client,
      );
      await render({ lines });
    } catch (err) {
      deps.logger.warn({ err }, "settings check failed");
      await render({ lines: [checkLine(false, "Check", userMessageOf(err))] }).catch((e: unknown) =>
        deps.logger.warn({ err: e }, "could not show the check's outcome"),
      );
    }
  });

  app.view(SETTINGS_VIEW, async (args: SubmitArgs) => {
    const { body, view, client } = args;
    const team = teamOfBody(body);
    const user = body.user.id;
    // Only the store is read before the ack: Slack gives a submission 3 s.
    let stored: Settings;
    try {
      stored = await deps.store.settings.getOrDefault(team);
    } catch (err) {
      deps.logger.error({ err }, "could not read the settings to save them");
      await args.ack({
        response_action: "errors",
        errors: {
          [SETTINGS_FIELDS.eventsKey]:
            "On Air could not read its settings just now, so nothing was saved. Try Save again in a minute.",
        },
      });
      return;
    }
    const result = applySettingsForm(
      stored,
      readSettingsForm(view.state.values as ViewStateValues),
    );
    if (!result.ok) {
      await args.ack({ response_action: "errors", errors: result.errors });
      return;
    }
    await args.ack();
    const meta = decodeSettingsMeta(view.private_metadata);
    try {
      // The modal only opens for admins; a forged submission from anyone else changes nothing.
      await requireAdmin(client, user);
      await saveSettings(deps, team, user, result.settings, result.changed);
      await tell(
        client,
        meta,
        user,
        "On Air's settings are saved. Run `/onair settings` and press Check to test the credentials.",
      );
      await announce(deps, team, result.settings, user, result.changed);
    } catch (err) {
      deps.logger.error({ err }, "saving settings failed");
      await tell(client, meta, user, userMessageOf(err)).catch((e: unknown) =>
        deps.logger.warn({ err: e }, "could not tell the admin"),
      );
    }
  });
}

/**
 * Stores the settings, drops every cached upstream token of the team (they were granted with the
 * old credentials), and writes an audit record naming the changed fields, never their values.
 */
export async function saveSettings(
  deps: Deps,
  team: string,
  user: string,
  settings: Settings,
  changed: readonly string[],
): Promise<void> {
  const next: Settings = { ...settings, updatedAt: deps.now(), updatedBy: user };
  await deps.store.settings.put(team, next);
  await deps.tokens.invalidateEnterprise(team);
  const links = await deps.store.users.list(team);
  await Promise.all(links.map((l) => deps.tokens.invalidateUser(team, l.link.email)));
  await deps.store.audit.append(team, {
    actor: user,
    action: "settings.update",
    details: { fields: changed.join(",") || "none" },
  });
}

async function tell(client: WebClient, meta: SettingsMeta, user: string, text: string) {
  if (meta.channel && !meta.channel.startsWith("D")) {
    try {
      await client.chat.postEphemeral({ channel: meta.channel, user, text });
      return;
    } catch {
      // not in that channel (or it is gone): the app's DM still reaches the admin
    }
  }
  await client.chat.postMessage({ channel: user, text });
}

/** A line in the audit channel, when one is set: who changed which fields (names only). */
async function announce(
  deps: Deps,
  team: string,
  settings: Settings,
  user: string,
  changed: readonly string[],
): Promise<void> {
  if (!settings.auditChannel || changed.length === 0) return;
  try {
    const client = await deps.bulkClient(team);
    await client.chat.postMessage({
      channel: settings.auditChannel,
      text: `<@${user}> changed On Air's settings: ${changed.join(", ")}.`,
    });
  } catch (err) {
    deps.logger.warn({ err }, "could not post the settings change to the audit channel");
  }
}
