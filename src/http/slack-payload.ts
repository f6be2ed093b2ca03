import { parse as parseQuery } from "node:querystring";

/**
 * Slack's request body as Bolt will read it (a form with a `payload` JSON, a form, or JSON),
 * checked for the fields Bolt's routing dereferences. A body that is no object (`null`, a
 * number), or an interactive payload without what every payload of its type carries, is refused
 * before Bolt sees it: inside Bolt it would throw where no listener can catch it.
 */

export type SlackBody =
  | { kind: "ssl_check" }
  | { kind: "event"; eventId: string | undefined; retryNum: number | undefined }
  | { kind: "other" }
  | { kind: "malformed"; reason: string };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const str = (v: unknown) => typeof v === "string" && v.length > 0;

function checkInteractive(p: Record<string, unknown>): string | undefined {
  const type = p.type;
  if (!str(type)) return "payload without a type";
  const user = p.user;
  if (!isObject(user) || !str(user.id)) return "payload without a user";
  switch (type) {
    case "view_submission":
    case "view_closed": {
      const view = p.view;
      if (!isObject(view) || !str(view.id) || !str(view.callback_id))
        return "payload without a view";
      if (type === "view_submission") {
        const state = view.state;
        if (!isObject(state) || !isObject(state.values)) return "view without a state";
      }
      return undefined;
    }
    case "block_actions":
      return Array.isArray(p.actions) && p.actions.every(isObject)
        ? undefined
        : "block_actions without actions";
    case "shortcut":
    case "message_action":
      return str(p.callback_id) ? undefined : "shortcut without a callback_id";
    default:
      return undefined;
  }
}

export function readSlackBody(raw: Buffer, contentType: string | undefined): SlackBody {
  const text = raw.toString("utf8");
  const type = (contentType ?? "").split(";")[0]?.trim().toLowerCase();
  let body: unknown;
  try {
    if (type === "application/x-www-form-urlencoded") {
      const form = parseQuery(text);
      if (form.ssl_check === "1") return { kind: "ssl_check" };
      if (typeof form.payload === "string") {
        body = JSON.parse(form.payload);
        if (!isObject(body)) return { kind: "malformed", reason: "payload is not an object" };
        const why = checkInteractive(body);
        return why ? { kind: "malformed", reason: why } : { kind: "other" };
      }
      if (form.payload !== undefined) return { kind: "malformed", reason: "payload repeated" };
      if (form.command !== undefined) {
        for (const k of ["command", "user_id", "team_id", "channel_id", "trigger_id"]) {
          if (typeof form[k] !== "string")
            return { kind: "malformed", reason: `command without ${k}` };
        }
      }
      return { kind: "other" };
    }
    body = JSON.parse(text);
  } catch {
    return { kind: "malformed", reason: "body is not valid JSON" };
  }
  if (!isObject(body)) return { kind: "malformed", reason: "body is not an object" };
  if (body.type === "event_callback") {
    if (!isObject(body.event) || !str(body.event_id)) {
      return { kind: "malformed", reason: "event_callback without an event" };
    }
    return { kind: "event", eventId: body.event_id as string, retryNum: undefined };
  }
  if (body.type === "url_verification") return { kind: "other" };
  if (!str(body.type)) return { kind: "malformed", reason: "body without a type" };
  return { kind: "other" };
}
