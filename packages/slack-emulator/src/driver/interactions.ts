import { initialState } from "../view-state.js";
import { applyViewSubmissionResponse, closeView } from "../views.ts";
import type {
  Channel,
  EphemeralMessage,
  Json,
  Message,
  User,
  ViewOutcome,
  ViewRecord,
  Workspace,
} from "../workspace.ts";
import type { DriverContext } from "./context.ts";
import { clientCheck, DriverError, elementsOf, stateOf, toState } from "./state.ts";
import type {
  BlockActionInput,
  DriverResult,
  ShortcutInput,
  ViewClosedInput,
  ViewSubmissionInput,
  ViewSubmissionResult,
} from "./types.ts";

/**
 * Interactions as Slack sends them: block actions on a message or a view, view submissions
 * (with what Slack does with the answer), view_closed and shortcuts. Payloads are built from
 * the emulator's state (the stored message or view the person acts on), with fresh trigger_ids
 * and response_urls the emulator honours.
 */

const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

interface Found {
  readonly block: Json;
  readonly element: Json;
}

function findElement(
  blocks: readonly unknown[],
  actionId: string,
  blockId?: string,
): Found | undefined {
  for (const b of blocks) {
    if (!isObj(b) || (blockId !== undefined && b.block_id !== blockId)) continue;
    for (const el of elementsOf(b)) if (el.action_id === actionId) return { block: b, element: el };
  }
  return undefined;
}

function actionIds(blocks: readonly unknown[]): string[] {
  return blocks.flatMap((b) => (isObj(b) ? elementsOf(b).map((e) => String(e.action_id)) : []));
}

function openModal(ws: Workspace, user: User, viewId: string | undefined): ViewRecord {
  const rec = viewId === undefined ? ws.topView(user.id) : ws.views.get(viewId);
  if (!rec || rec.closed || rec.view.type !== "modal") {
    throw new DriverError(`${user.name} has no open modal${viewId ? ` ${viewId}` : ""}`);
  }
  if (rec.user !== user.id) throw new DriverError(`view ${rec.view.id} belongs to another user`);
  if (ws.topView(user.id)?.view.id !== rec.view.id) {
    throw new DriverError(`view ${rec.view.id} is not on top of ${user.name}'s modal stack`);
  }
  return rec;
}

/** Where a block action happens: a view, or a message (with its response_url). */
interface Surface {
  readonly blocks: readonly unknown[];
  readonly container: Json;
  /** the message's channel and the message itself, as block_actions carries them */
  readonly extra: Json;
  readonly responseUrl?: string;
  readonly viewRec?: ViewRecord;
  readonly storedState: Record<string, Record<string, Json>>;
}

function viewSurface(rec: ViewRecord): Surface {
  return {
    blocks: rec.view.blocks,
    container: { type: "view", view_id: rec.view.id },
    extra: {},
    viewRec: rec,
    storedState: rec.view.state.values,
  };
}

function messageSurface(
  ws: Workspace,
  user: User,
  ch: Channel,
  m: Message | EphemeralMessage,
  ephemeral: boolean,
): Surface {
  return {
    blocks: m.blocks ?? [],
    container: { type: "message", message_ts: m.ts, channel_id: ch.id, is_ephemeral: ephemeral },
    extra: {
      channel: { id: ch.id, name: ch.is_im ? "directmessage" : ch.name },
      ...(!ephemeral && { message: ws.messageJson(m as Message) }),
    },
    responseUrl: ws.createResponseUrl({
      channel: ch.id,
      user: user.id,
      messageTs: m.ts,
      ephemeral,
      threadTs: m.thread_ts,
    }),
    storedState: {},
  };
}

/** The message or view the person acts on, as the input names it (or the newest holding it). */
function surfaceOf(ctx: DriverContext, user: User, input: BlockActionInput): Surface {
  const { ws, channelOf } = ctx;
  if (input.view_id !== undefined) {
    const rec = ws.views.get(input.view_id);
    if (!rec || rec.closed) throw new DriverError(`no open view ${input.view_id}`);
    return viewSurface(rec);
  }
  if (input.channel !== undefined) {
    const ch = channelOf(input.channel);
    const ephemerals = ws.ephemeralsFor({ channel: ch.id, user: user.id });
    let target: { m: Message | EphemeralMessage; eph: boolean } | undefined;
    if (input.message_ts !== undefined) {
      const m = ws.findMessage(ch, input.message_ts);
      const e = ephemerals.find((x) => x.ts === input.message_ts);
      if (m && !input.ephemeral) target = { m, eph: false };
      else if (e) target = { m: e, eph: true };
    } else {
      const holds = (m: Message | EphemeralMessage) =>
        findElement(m.blocks ?? [], input.action_id, input.block_id) !== undefined;
      const pool: { m: Message | EphemeralMessage; eph: boolean }[] = [
        ...(input.ephemeral === true ? [] : ch.messages.map((m) => ({ m, eph: false }))),
        ...(input.ephemeral === false ? [] : ephemerals.map((m) => ({ m, eph: true }))),
      ];
      target = pool.filter((x) => holds(x.m)).sort((a, b) => (a.m.ts < b.m.ts ? 1 : -1))[0];
    }
    if (!target) {
      throw new DriverError(
        `no message in ${ch.name}${input.message_ts ? ` at ${input.message_ts}` : ""} with action ${input.action_id}`,
      );
    }
    return messageSurface(ws, user, ch, target.m, target.eph);
  }
  const rec = [ws.topView(user.id), ws.homeView(user.id)].find(
    (r) => r && findElement(r.view.blocks, input.action_id, input.block_id) !== undefined,
  );
  if (!rec) throw new DriverError(`${user.name} sees no view with action ${input.action_id}`);
  return viewSurface(rec);
}

/** The `actions[0]` Slack sends for this element; a view's stored state follows the change. */
function actionOf(
  ctx: DriverContext,
  surface: Surface,
  found: Found,
  input: BlockActionInput,
): Json {
  const { block, element } = found;
  const blockId = String(block.block_id);
  const actionId = String(element.action_id);
  const raw =
    input.selected_option ??
    input.selected_options ??
    input.selected_user ??
    input.selected_users ??
    input.selected_conversation ??
    input.selected_conversations ??
    input.selected_channel ??
    input.selected_channels ??
    input.selected_date ??
    input.selected_time ??
    input.selected_date_time ??
    input.value;

  if (element.type === "button" || element.type === "workflow_button") {
    return {
      type: element.type,
      action_id: actionId,
      block_id: blockId,
      text: element.text,
      ...(element.style !== undefined && { style: element.style }),
      ...(element.url !== undefined && { url: element.url }),
      ...((raw ?? element.value) !== undefined && { value: String(raw ?? element.value) }),
      action_ts: ctx.actionTs(),
    };
  }
  const state =
    raw === undefined
      ? (surface.storedState[blockId]?.[actionId] ?? initialState(element))
      : toState(element, raw, ctx.resolvers);
  if (!state) throw new DriverError(`cannot act on a ${String(element.type)}`);
  if (surface.viewRec && element.type !== "overflow") {
    const stored = surface.viewRec.view.state.values;
    stored[blockId] = { ...stored[blockId], [actionId]: state };
  }
  return { ...state, action_id: actionId, block_id: blockId, action_ts: ctx.actionTs() };
}

export async function blockAction(
  ctx: DriverContext,
  input: BlockActionInput,
): Promise<DriverResult> {
  const { ws, userOf, team, enterprise, userPayload, sendPayload } = ctx;
  const user = userOf(input.user);
  const surface = surfaceOf(ctx, user, input);
  const { blocks, viewRec, responseUrl } = surface;
  const found = findElement(blocks, input.action_id, input.block_id);
  if (!found) {
    throw new DriverError(
      `action ${input.action_id} not found; the surface has: ${actionIds(blocks).join(", ")}`,
    );
  }
  const action = actionOf(ctx, surface, found, input);

  const triggerId = ws.issueTriggerId(user.id);
  const payload: Json = {
    type: "block_actions",
    user: userPayload(user),
    api_app_id: ws.app.appId,
    token: ws.verificationToken,
    container: surface.container,
    trigger_id: triggerId,
    team: team(),
    ...enterprise(),
    ...surface.extra,
    // Slack's view.state.values holds every input, untouched ones at their initial value.
    ...(viewRec && {
      view: {
        ...ws.viewJson(viewRec),
        state: { values: stateOf(viewRec.view.blocks, viewRec.view.state.values) },
      },
    }),
    state: {
      values: viewRec ? stateOf(blocks, viewRec.view.state.values) : stateOf(blocks, {}),
    },
    ...(responseUrl !== undefined && { response_url: responseUrl }),
    actions: [action],
  };
  const r = await sendPayload(payload, input);
  return { ...r, triggerId, ...(responseUrl !== undefined && { responseUrl }) };
}

export async function viewSubmission(
  ctx: DriverContext,
  input: ViewSubmissionInput,
): Promise<ViewSubmissionResult> {
  const { ws, userOf, team, enterprise, userPayload, resolvers, sendPayload, deadlineMs } = ctx;
  const user = userOf(input.user);
  const rec = openModal(ws, user, input.view_id);
  const values = stateOf(rec.view.blocks, rec.view.state.values);
  for (const [key, raw] of Object.entries(input.values ?? {})) {
    const hits: { blockId: string; el: Json }[] = [];
    for (const b of rec.view.blocks) {
      if (!isObj(b)) continue;
      for (const el of elementsOf(b)) {
        if (!initialState(el)) continue;
        if (el.action_id === key || (b.block_id === key && b.type === "input")) {
          hits.push({ blockId: String(b.block_id), el });
        }
      }
    }
    const hit = hits[0];
    if (!hit)
      throw new DriverError(`no input ${key} in view ${rec.view.callback_id || rec.view.id}`);
    if (hits.length > 1)
      throw new DriverError(`${key} names more than one input; use the block_id`);
    values[hit.blockId] = {
      ...values[hit.blockId],
      [String(hit.el.action_id)]: toState(hit.el, raw, resolvers),
    };
  }
  if (input.clientValidation !== false) clientCheck(rec, values);
  rec.view.state.values = values;
  rec.errors = undefined;

  const responseUrls: Json[] = [];
  for (const b of rec.view.blocks) {
    if (!isObj(b) || b.type !== "input" || !isObj(b.element)) continue;
    const el = b.element;
    if (el.response_url_enabled !== true) continue;
    const s = values[String(b.block_id)]?.[String(el.action_id)];
    const channel = (s?.selected_conversation ?? s?.selected_channel) as string | undefined;
    if (!channel) continue;
    responseUrls.push({
      block_id: b.block_id,
      action_id: el.action_id,
      channel_id: channel,
      response_url: ws.createResponseUrl({ channel, user: user.id }),
    });
  }

  const triggerId = ws.issueTriggerId(user.id);
  const payload: Json = {
    type: "view_submission",
    team: team(),
    user: userPayload(user),
    api_app_id: ws.app.appId,
    token: ws.verificationToken,
    trigger_id: triggerId,
    view: ws.viewJson(rec),
    response_urls: responseUrls,
    ...enterprise(),
  };
  const r = await sendPayload(payload, input);
  const outcome: ViewOutcome =
    r.status === 200 && input.forge === undefined && !r.late
      ? applyViewSubmissionResponse(ws, user.id, rec.view.id, r.body)
      : {
          action: "invalid",
          reason: r.late
            ? `the app answered after ${r.elapsedMs} ms; Slack gave up at ${deadlineMs} ms`
            : `the app answered HTTP ${r.status}`,
        };
  return { ...r, triggerId, outcome };
}

export async function viewClosed(
  ctx: DriverContext,
  input: ViewClosedInput,
): Promise<DriverResult | null> {
  const { ws, userOf, team, enterprise, userPayload, sendPayload } = ctx;
  const user = userOf(input.user);
  const rec = openModal(ws, user, input.view_id);
  const notify = rec.view.notify_on_close;
  const json = ws.viewJson(rec);
  closeView(ws, user.id, rec.view.id, input.is_cleared === true);
  if (!notify) return null;
  return sendPayload(
    {
      type: "view_closed",
      team: team(),
      user: userPayload(user),
      api_app_id: ws.app.appId,
      token: ws.verificationToken,
      view: json,
      is_cleared: input.is_cleared === true,
      ...enterprise(),
    },
    input,
  );
}

export async function shortcut(ctx: DriverContext, input: ShortcutInput): Promise<DriverResult> {
  const { ws, userOf, channelOf, team, enterprise, userPayload, actionTs, sendPayload } = ctx;
  const user = userOf(input.user);
  const triggerId = ws.issueTriggerId(user.id);
  const base = {
    callback_id: input.callback_id,
    trigger_id: triggerId,
    user: userPayload(user),
    team: team(),
    token: ws.verificationToken,
    action_ts: actionTs(),
    ...enterprise(),
  };
  if (input.channel !== undefined && input.message_ts !== undefined) {
    const ch = channelOf(input.channel);
    const m = ws.findMessage(ch, input.message_ts);
    if (!m) throw new DriverError(`no message ${input.message_ts} in ${ch.name}`);
    const responseUrl = ws.createResponseUrl({
      channel: ch.id,
      user: user.id,
      messageTs: m.ts,
    });
    const r = await sendPayload(
      {
        type: "message_action",
        ...base,
        message_ts: m.ts,
        message: ws.messageJson(m),
        channel: { id: ch.id, name: ch.name },
        response_url: responseUrl,
      },
      input,
    );
    return { ...r, triggerId, responseUrl };
  }
  const r = await sendPayload({ type: "shortcut", ...base }, input);
  return { ...r, triggerId };
}
