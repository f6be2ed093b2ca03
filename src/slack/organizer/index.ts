import type {
  AllMiddlewareArgs,
  App,
  BlockAction,
  SlackActionMiddlewareArgs,
  SlackViewMiddlewareArgs,
} from "@slack/bolt";
import type { WebClient } from "@slack/web-api";
import type { Deps } from "../../deps.ts";
import { effectiveSettings } from "../access.ts";
import { CARD_ACTIONS, LIST_ACTIONS } from "../blocks/ids.ts";
import { settingsCommand } from "../core/settings.ts";
import { SHORTCUTS } from "../ids.ts";
import type { CommandContext, CommandRouter } from "../router.ts";
import { confirmCancel, openCancelConfirm } from "./cancel.ts";
import { plainMessage, teamOf, tellUser } from "./common.ts";
import type { ViewStateValues } from "./form.ts";
import { publishHome } from "./home.ts";
import { EVENT_FIELDS, HOME_ACTIONS, VIEWS } from "./ids.ts";
import { listCommand, showCommand } from "./list.ts";
import { openNotifyForm, submitNotify } from "./notify.ts";
import { resolveEvent } from "./resolve.ts";
import { openEditForm, openScheduleForm, refreshPreview, submitEventForm } from "./schedule.ts";
import { mintToken, openTokenForm, readTokenForm, tokensCommand } from "./tokens.ts";

type ActionArgs = SlackActionMiddlewareArgs<BlockAction> & AllMiddlewareArgs;
type ViewArgs = SlackViewMiddlewareArgs & AllMiddlewareArgs;

/** Where a block action came from: the channel of a message, or none (App Home, a modal). */
function sourceChannel(body: BlockAction): string | undefined {
  return body.channel?.id ?? body.container?.channel_id;
}

function actionValue(body: BlockAction): string {
  const a = body.actions[0];
  if (!a) return "";
  if (a.type === "button") return a.value ?? "";
  if (a.type === "overflow") return a.selected_option?.value ?? "";
  return "";
}

/** Registers this area's subcommands, actions, views and events. */
export function registerOrganizer(app: App, router: CommandRouter, deps: Deps): void {
  const guard =
    (what: string, client: WebClient, user: string, channel?: string) => (err: unknown) => {
      deps.logger.error({ err, what }, "organizer action failed");
      return tellUser(client, user, { text: plainMessage(err) }, channel).catch((e: unknown) =>
        deps.logger.warn({ err: e }, "could not tell the user"),
      );
    };
  const opt = (channel: string | undefined) => (channel ? { channel } : {});

  // ---- slash subcommands ----
  router.on("schedule", (ctx) =>
    openScheduleForm(deps, ctx.client, {
      team: ctx.teamId,
      user: ctx.userId,
      triggerId: ctx.triggerId,
      channel: ctx.channelId,
    }),
  );
  const withEvent =
    (usage: string, open: (ctx: CommandContext, eventId: string) => Promise<void>) =>
    async (ctx: CommandContext) => {
      const record = await resolveEvent(deps, ctx.teamId, ctx.userId, ctx.args, usage);
      await open(ctx, record.eventId);
    };
  router.on(
    "edit",
    withEvent("/onair edit <event>", (ctx, eventId) =>
      openEditForm(deps, ctx.client, {
        team: ctx.teamId,
        user: ctx.userId,
        triggerId: ctx.triggerId,
        channel: ctx.channelId,
        eventId,
      }),
    ),
  );
  router.on(
    "cancel",
    withEvent("/onair cancel <event>", (ctx, eventId) =>
      openCancelConfirm(deps, ctx.client, {
        team: ctx.teamId,
        user: ctx.userId,
        triggerId: ctx.triggerId,
        channel: ctx.channelId,
        eventId,
      }),
    ),
  );
  router.on("list", listCommand);
  router.on("show", showCommand);
  router.on("token", (ctx) =>
    openTokenForm(deps, ctx.client, {
      team: ctx.teamId,
      user: ctx.userId,
      triggerId: ctx.triggerId,
      channel: ctx.channelId,
    }),
  );
  router.on("tokens", tokensCommand);

  // ---- global shortcut and App Home buttons ----
  app.shortcut(SHORTCUTS.scheduleEvent.callbackId, async ({ ack, body, client }) => {
    await ack();
    const team = teamOf(body);
    await openScheduleForm(deps, client, {
      team,
      user: body.user.id,
      triggerId: body.trigger_id,
    }).catch(guard("schedule shortcut", client, body.user.id));
  });
  app.action<BlockAction>(HOME_ACTIONS.schedule, async ({ ack, body, client }: ActionArgs) => {
    await ack();
    await openScheduleForm(deps, client, {
      team: teamOf(body),
      user: body.user.id,
      triggerId: body.trigger_id,
    }).catch(guard("schedule button", client, body.user.id));
  });
  app.action<BlockAction>(HOME_ACTIONS.token, async ({ ack, body, client }: ActionArgs) => {
    await ack();
    await openTokenForm(deps, client, {
      team: teamOf(body),
      user: body.user.id,
      triggerId: body.trigger_id,
    }).catch(guard("token button", client, body.user.id));
  });
  app.action<BlockAction>(HOME_ACTIONS.settings, async ({ ack, body, client }: ActionArgs) => {
    await ack();
    const user = body.user.id;
    const reply = async (text: string) => tellUser(client, user, { text });
    // The core area's own `/onair settings` handler, so Home opens the very same modal.
    const ctx: CommandContext = {
      deps,
      subcommand: "settings",
      args: "",
      teamId: teamOf(body),
      enterpriseId: undefined,
      userId: user,
      channelId: "",
      triggerId: body.trigger_id,
      client,
      // No response_url from App Home: an answer goes to the app's DM instead.
      respond: async (message) => {
        await reply(typeof message === "string" ? message : (message.text ?? ""));
        return new Response(null, { status: 200 });
      },
      reply,
    };
    await settingsCommand(deps)(ctx).catch(guard("settings button", client, user));
  });

  // ---- card, list and Home event buttons ----
  const eventAction =
    (
      what: string,
      open: (
        client: WebClient,
        a: { team: string; user: string; triggerId: string; eventId: string; channel?: string },
      ) => Promise<void>,
    ) =>
    async ({ ack, body, client }: ActionArgs) => {
      await ack();
      const channel = sourceChannel(body);
      await open(client, {
        team: teamOf(body),
        user: body.user.id,
        triggerId: body.trigger_id,
        eventId: actionValue(body),
        ...opt(channel),
      }).catch(guard(what, client, body.user.id, channel));
    };
  app.action<BlockAction>(
    CARD_ACTIONS.edit,
    eventAction("edit button", (c, a) => openEditForm(deps, c, a)),
  );
  app.action<BlockAction>(
    CARD_ACTIONS.cancel,
    eventAction("cancel button", (c, a) => openCancelConfirm(deps, c, a)),
  );
  app.action<BlockAction>(
    CARD_ACTIONS.notify,
    eventAction("notify button", (c, a) => openNotifyForm(deps, c, a)),
  );
  app.action<BlockAction>(LIST_ACTIONS.overflow, async (args: ActionArgs) => {
    const [action, eventId = ""] = actionValue(args.body).split("|");
    const open =
      action === CARD_ACTIONS.cancel
        ? eventAction("list cancel", (c, a) => openCancelConfirm(deps, c, { ...a, eventId }))
        : eventAction("list edit", (c, a) => openEditForm(deps, c, { ...a, eventId }));
    await open(args);
  });

  // ---- the schedule form's live preview ----
  for (const id of [
    EVENT_FIELDS.start,
    EVENT_FIELDS.timezone,
    EVENT_FIELDS.recurrence,
    EVENT_FIELDS.count,
    EVENT_FIELDS.frequency,
  ]) {
    app.action<BlockAction>(id, async ({ ack, body, client }: ActionArgs) => {
      await ack();
      const view = body.view;
      if (!view || view.callback_id !== VIEWS.event) return;
      await refreshPreview(client, view as unknown as Parameters<typeof refreshPreview>[1]).catch(
        (err: unknown) => deps.logger.warn({ err }, "preview not refreshed"),
      );
    });
  }

  // ---- view submissions ----
  app.view(VIEWS.event, async ({ ack, body, view, client }: ViewArgs) => {
    const result = submitEventForm(deps, client, {
      team: teamOf(body),
      user: body.user.id,
      privateMetadata: view.private_metadata,
      values: view.state.values as unknown as ViewStateValues,
    });
    if ("errors" in result) {
      await ack({ response_action: "errors", errors: result.errors });
      return;
    }
    await ack();
    await result.run();
  });
  app.view(VIEWS.cancel, async ({ ack, body, view, client }: ViewArgs) => {
    await ack();
    await confirmCancel(deps, client, {
      team: teamOf(body),
      user: body.user.id,
      privateMetadata: view.private_metadata,
    });
  });
  app.view(VIEWS.token, async ({ ack, body, view, client }: ViewArgs) => {
    const team = teamOf(body);
    const settings = await effectiveSettings(deps, team);
    const read = readTokenForm(view.state.values as unknown as ViewStateValues, settings);
    if ("errors" in read) {
      await ack({ response_action: "errors", errors: read.errors });
      return;
    }
    await ack();
    await mintToken(deps, client, {
      team,
      user: body.user.id,
      privateMetadata: view.private_metadata,
      request: read.request,
    });
  });
  app.view(VIEWS.notify, async ({ ack, body, view, client }: ViewArgs) => {
    await ack();
    await submitNotify(deps, client, {
      team: teamOf(body),
      user: body.user.id,
      privateMetadata: view.private_metadata,
      values: view.state.values as unknown as ViewStateValues,
    });
  });

  // ---- App Home ----
  app.event("app_home_opened", async ({ event, body, client }) => {
    if (event.tab !== "home") return;
    const team = (body as { team_id?: string }).team_id;
    if (!team) return;
    await publishHome(deps, client, team, event.user);
  });
}
