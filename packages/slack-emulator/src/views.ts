import { validateView } from "./blockkit.ts";
import { argumentError, SlackApiError } from "./errors.ts";
import { randomHex, slackId } from "./ids.ts";
import {
  type Json,
  type SlackView,
  VIEW_STACK_LIMIT,
  type ViewOutcome,
  type ViewRecord,
  withIds,
} from "./model.ts";
import type { Workspace } from "./workspace.ts";

/**
 * Modals and App Home as Slack keeps them: a trigger opens a modal (replacing what the person
 * had open), a stack of at most three, updates by view_id or external_id with the hash
 * checked, one Home view per person, and what Slack does with a view_submission's answer.
 */

const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

function checkView(input: unknown, want: "modal" | "home"): Json {
  const r = validateView(input);
  if (!r.ok) throw argumentError("invalid_arguments", r.messages);
  const v = input as Json;
  if (v.type !== want) {
    throw argumentError("invalid_arguments", [`[ERROR] must be ${want} [json-pointer:/view/type]`]);
  }
  if (JSON.stringify(v).length > 250_000) throw new SlackApiError("view_too_large");
  return v;
}

function checkExternalId(ws: Workspace, externalId: unknown, except?: string): void {
  if (typeof externalId !== "string" || externalId === "") return;
  for (const rec of ws.views.values()) {
    if (!rec.closed && rec.view.external_id === externalId && rec.view.id !== except) {
      throw new SlackApiError("duplicate_external_id");
    }
  }
}

function makeView(
  ws: Workspace,
  input: Json,
  user: string,
  root: string | null,
  previous: string | null,
  keepId?: string,
): ViewRecord {
  const id = keepId ?? slackId("V", 10);
  const view: SlackView = {
    id,
    team_id: ws.team.id,
    type: input.type as "modal" | "home",
    title: input.title ?? null,
    close: input.close ?? null,
    submit: input.submit ?? null,
    blocks: withIds((input.blocks as unknown[]) ?? []),
    private_metadata: typeof input.private_metadata === "string" ? input.private_metadata : "",
    callback_id: typeof input.callback_id === "string" ? input.callback_id : "",
    state: { values: {} },
    hash: `${ws.nowSec()}.${randomHex(4)}`,
    clear_on_close: input.clear_on_close === true,
    notify_on_close: input.notify_on_close === true,
    root_view_id: root ?? id,
    previous_view_id: previous,
    app_id: ws.app.appId,
    external_id: typeof input.external_id === "string" ? input.external_id : "",
    app_installed_team_id: ws.orgInstall && ws.enterprise ? ws.enterprise.id : ws.team.id,
    bot_id: ws.app.botId,
  };
  const rec: ViewRecord = { view, user, closed: false, errors: undefined };
  ws.views.set(id, rec);
  return rec;
}

export function openView(ws: Workspace, triggerId: string, input: unknown): ViewRecord {
  const v = checkView(input, "modal");
  const user = ws.consumeTrigger(triggerId);
  checkExternalId(ws, v.external_id);
  // A new modal replaces whatever the user had open.
  clearStack(ws, user);
  const rec = makeView(ws, v, user, null, null);
  ws.modalStacks.set(user, [rec.view.id]);
  return rec;
}

export function pushView(ws: Workspace, triggerId: string, input: unknown): ViewRecord {
  const v = checkView(input, "modal");
  const user = ws.consumeTrigger(triggerId);
  return pushFor(ws, user, v);
}

function pushFor(ws: Workspace, user: string, v: Json): ViewRecord {
  const stack = ws.modalStacks.get(user) ?? [];
  const top = stack[stack.length - 1];
  const root = stack[0];
  if (top === undefined || root === undefined) throw new SlackApiError("not_found");
  if (stack.length >= VIEW_STACK_LIMIT) throw new SlackApiError("push_limit_reached");
  checkExternalId(ws, v.external_id);
  const rec = makeView(ws, v, user, root, top);
  stack.push(rec.view.id);
  return rec;
}

export function updateView(
  ws: Workspace,
  ref: { view_id?: string; external_id?: string },
  input: unknown,
  hash?: string,
) {
  let rec: ViewRecord | undefined;
  if (ref.view_id !== undefined) rec = ws.views.get(ref.view_id);
  else if (ref.external_id !== undefined) {
    for (const r of ws.views.values()) {
      if (!r.closed && r.view.external_id === ref.external_id) rec = r;
    }
  } else {
    throw argumentError("invalid_arguments", ["[ERROR] either view_id or external_id is required"]);
  }
  if (!rec || rec.closed) throw new SlackApiError("not_found");
  if (hash !== undefined && hash !== "" && hash !== rec.view.hash) {
    throw new SlackApiError("hash_conflict");
  }
  const v = checkView(input, rec.view.type);
  checkExternalId(ws, v.external_id, rec.view.id);
  return replaceView(ws, rec, v);
}

/** Same id, new content and hash; input values survive for blocks whose block_id remains. */
function replaceView(ws: Workspace, rec: ViewRecord, v: Json): ViewRecord {
  const old = rec.view;
  const fresh = makeView(ws, v, rec.user, old.root_view_id, old.previous_view_id, old.id);
  const keep = new Set(
    fresh.view.blocks.flatMap((b) =>
      isObj(b) && typeof b.block_id === "string" ? [b.block_id] : [],
    ),
  );
  for (const [blockId, values] of Object.entries(old.state.values)) {
    if (keep.has(blockId)) fresh.view.state.values[blockId] = values;
  }
  return fresh;
}

export function publishView(
  ws: Workspace,
  user: string,
  input: unknown,
  hash?: string,
): ViewRecord {
  const u = ws.users.get(user);
  if (!u || u.is_bot) throw new SlackApiError("user_not_found");
  const v = checkView(input, "home");
  const current = ws.homeView(user);
  if (current && hash !== undefined && hash !== "" && hash !== current.view.hash) {
    throw new SlackApiError("hash_conflict");
  }
  checkExternalId(ws, v.external_id, current?.view.id);
  const rec = current ? replaceView(ws, current, v) : makeView(ws, v, user, null, null);
  ws.homeViews.set(user, rec.view.id);
  return rec;
}

function clearStack(ws: Workspace, user: string): ViewRecord[] {
  const closed = ws.stack(user);
  for (const rec of closed) rec.closed = true;
  ws.modalStacks.delete(user);
  return closed;
}

/**
 * The user closes the top modal (or all of them with clear_on_close / `all`).
 * Returns the views that closed, top first.
 */
export function closeView(ws: Workspace, user: string, viewId: string, all = false): ViewRecord[] {
  const stack = ws.modalStacks.get(user) ?? [];
  if (stack[stack.length - 1] !== viewId) {
    throw new Error(`view ${viewId} is not the top modal of ${user}; only that one can close`);
  }
  const top = ws.views.get(viewId);
  if (all || top?.view.clear_on_close) return clearStack(ws, user).reverse();
  stack.pop();
  if (top) top.closed = true;
  if (stack.length === 0) ws.modalStacks.delete(user);
  return top ? [top] : [];
}

/**
 * What Slack does with the app's answer to a view_submission: nothing (close the view),
 * errors (show them), update, push, clear. Returns what happened, for tests and the page.
 */
export function applyViewSubmissionResponse(
  ws: Workspace,
  user: string,
  viewId: string,
  body: unknown,
): ViewOutcome {
  const rec = ws.views.get(viewId);
  if (!rec || rec.closed) return { action: "invalid", reason: "the view is no longer open" };
  if (body === undefined || body === "" || (isObj(body) && Object.keys(body).length === 0)) {
    closeView(ws, user, viewId);
    return { action: "closed" };
  }
  if (!isObj(body)) return { action: "invalid", reason: "the response body is not JSON" };
  switch (body.response_action) {
    case "errors": {
      const errors = body.errors;
      if (!isObj(errors)) return { action: "invalid", reason: "errors must be an object" };
      const inputIds = new Set(
        rec.view.blocks.flatMap((b) =>
          isObj(b) && b.type === "input" && typeof b.block_id === "string" ? [b.block_id] : [],
        ),
      );
      const unknown = Object.keys(errors).filter((k) => !inputIds.has(k));
      if (unknown.length > 0) {
        return {
          action: "invalid",
          reason: `errors name blocks that are not inputs: ${unknown.join(", ")}`,
        };
      }
      rec.errors = Object.fromEntries(Object.entries(errors).map(([k, v]) => [k, String(v)]));
      return { action: "errors", errors: rec.errors };
    }
    case "update": {
      const r = validateView(body.view);
      if (!r.ok || !isObj(body.view) || body.view.type !== "modal") {
        return { action: "invalid", reason: "invalid view", messages: r.messages };
      }
      const next = replaceView(ws, rec, body.view);
      return { action: "updated", view: next.view };
    }
    case "push": {
      const r = validateView(body.view);
      if (!r.ok || !isObj(body.view) || body.view.type !== "modal") {
        return { action: "invalid", reason: "invalid view", messages: r.messages };
      }
      try {
        const next = pushFor(ws, user, body.view);
        return { action: "pushed", view: next.view };
      } catch (err) {
        if (err instanceof SlackApiError) return { action: "invalid", reason: err.code };
        throw err;
      }
    }
    case "clear":
      clearStack(ws, user);
      return { action: "cleared" };
    default:
      return {
        action: "invalid",
        reason: `unknown response_action ${String(body.response_action)}`,
      };
  }
}
