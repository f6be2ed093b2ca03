/**
 * The emulated workspace as the acting person sees it (the page's state poll), and the figures
 * of an event's latest instance for the live panel.
 */
import type { Channel, Json, Workspace } from "@onair/slack-emulator";
import type { EventRecord } from "../store/records.ts";
import { withCalls } from "./calls.ts";
import { homesOf, teamOf, workspacesOf } from "./org.ts";
import { withWorkObjects } from "./work-objects.ts";

export function presentGuids(out: Json): string[] {
  const list = Array.isArray(out.present) ? (out.present as Json[]) : [];
  return list.map((a) => String(a.endpointGuid));
}

/**
 * In an org, a channel belongs to the workspaces its people are from (the emulator keeps one set
 * of channels for the whole org): the shared ones show in both, a workspace's own in it alone.
 */
function inWorkspace(ws: Workspace, c: Channel, team: string): boolean {
  if (!ws.enterprise) return true;
  // People of one workspace say whose a channel is (a member of both says nothing).
  const homes = [...c.members]
    .filter((m) => !ws.user(m)?.is_bot)
    .map((m) => homesOf(ws, m))
    .filter((h) => h.length === 1);
  return homes.length === 0 || homes.some((h) => h[0] === team);
}

function visibleChannels(ws: Workspace, user: string): Channel[] {
  const team = teamOf(ws, user);
  return [...ws.channels.values()].filter((c) =>
    // The page shows the person's DM with the app, not DMs between people (no client for those).
    c.is_im
      ? c.user === user && c.members.has(ws.app.botUserId)
      : (!c.is_private || c.members.has(user)) && inWorkspace(ws, c, team),
  );
}

export function stateFor(ws: Workspace, user: string): Json {
  const channels = visibleChannels(ws, user);
  const ids = new Set(channels.map((c) => c.id));
  const home = ws.homeView(user);
  const team = teamOf(ws, user);
  const workspaces = workspacesOf(ws);
  return {
    me: user,
    // The person's own workspace; in an org, the page switches between `workspaces`.
    team: ws.team.id === team ? ws.team : (workspaces.find((w) => w.id === team) ?? ws.team),
    workspaces,
    botUserId: ws.app.botUserId,
    appName: "On Air",
    users: [...ws.users.values()].map((u) => ({
      id: u.id,
      name: u.name,
      real_name: u.real_name,
      tz: u.tz,
      title: u.title,
      is_admin: u.is_admin,
      is_bot: u.is_bot,
      team_id: u.team_id,
      workspaces: homesOf(ws, u.id),
    })),
    usergroups: [...ws.usergroups.values()].map((g) => ({
      id: g.id,
      handle: g.handle,
      name: g.name,
    })),
    channels: channels.map((c) => ({
      id: c.id,
      name: c.name,
      is_im: c.is_im,
      is_private: c.is_private,
      user: c.user,
      topic: c.topic,
      member: c.members.has(user),
      messages: c.messages.map((m) => withCalls(ws, withWorkObjects(ws, c.id, ws.messageJson(m)))),
    })),
    ephemerals: ws.ephemeralsFor({ user }).filter((e) => ids.has(e.channel)),
    scheduled: [...ws.scheduled.values()].filter((s) => ids.has(s.channel)),
    modals: ws.stack(user).map((r) => ({ ...ws.viewJson(r), errors: r.errors ?? null })),
    home: home ? ws.viewJson(home) : null,
  };
}

export interface InstanceView {
  instanceId: string;
  /** NOT_STARTED, PREP_EVENT, IN_EVENT, or ENDED once the instance has ended. */
  state: string;
  present: number;
  peak: number;
  unique: number;
  endedAt?: number;
}

export function latestInstance(instances: EventRecord["instances"]): InstanceView | undefined {
  const list = Object.entries(instances);
  list.sort((a, b) => (b[1].updatedAt ?? 0) - (a[1].updatedAt ?? 0));
  const top = list[0];
  if (!top) return undefined;
  const [instanceId, i] = top;
  const endedAt = typeof i.endedAt === "number" ? i.endedAt : undefined;
  return {
    instanceId,
    state: endedAt !== undefined ? "ENDED" : i.state,
    present: i.present,
    peak: i.peak,
    unique: i.unique,
    ...(endedAt !== undefined ? { endedAt } : {}),
  };
}
