import type { Json } from "./model.ts";
import { channelJson, messageJson, userJson, viewJson } from "./shapes.ts";
import type { Workspace } from "./workspace.ts";

/** Everything a page (or a test) may want to show, as plain JSON. Tokens are left out. */
export function snapshot(ws: Workspace): Json {
  return {
    team: ws.team,
    app: { appId: ws.app.appId, botId: ws.app.botId, botUserId: ws.app.botUserId },
    users: [...ws.users.values()].map((u) => userJson(ws, u, true)),
    channels: [...ws.channels.values()].map((c) => ({
      ...channelJson(ws, c, ws.app.botUserId, true),
      members: [...c.members],
      messages: c.messages.map((m) => messageJson(ws, m)),
    })),
    usergroups: [...ws.usergroups.values()],
    ephemerals: ws.ephemeralsFor(),
    scheduled: [...ws.scheduled.values()],
    modals: Object.fromEntries(
      [...ws.modalStacks.keys()].map((u) => [u, ws.stack(u).map((r) => viewJson(r))]),
    ),
    homes: Object.fromEntries(
      [...ws.homeViews.entries()].flatMap(([u, id]) => {
        const rec = ws.views.get(id);
        return rec ? [[u, viewJson(rec)]] : [];
      }),
    ),
  };
}
