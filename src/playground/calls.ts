/**
 * A `call` block as Slack's client draws it. The app posts only `{type: "call", call_id}`;
 * Slack's client fills in the call it names (its title, join link, start and end, who is in)
 * from the Calls API's record. The emulator keeps that record (callsOf) but, like Slack's
 * reference, says nothing of a read-back shape, so its Web API answers stay as posted; only the
 * page's view is filled here, in the shape blocks.js draws (`call.v1`).
 */
import { callsOf, type Json, type Workspace } from "@onair/slack-emulator";

export function withCalls(ws: Workspace, message: Json): Json {
  const blocks = Array.isArray(message.blocks) ? (message.blocks as Json[]) : undefined;
  if (!blocks?.some((b) => b.type === "call")) return message;
  const byId = new Map(callsOf(ws).map((c) => [c.id, c]));
  return {
    ...message,
    blocks: blocks.map((b) => {
      const call = b.type === "call" ? byId.get(String(b.call_id)) : undefined;
      if (!call) return b;
      return {
        ...b,
        call: {
          v1: {
            id: call.id,
            name: call.title ?? "",
            join_url: call.join_url,
            ...(call.desktop_app_join_url && { desktop_app_join_url: call.desktop_app_join_url }),
            date_start: call.date_start,
            ...(call.date_end !== undefined && { date_end: call.date_end }),
            active_participants: call.users,
          },
        },
      };
    }),
  };
}
