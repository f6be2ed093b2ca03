/**
 * The playground as an Enterprise organization (PLAYGROUND_ORG=1): the app installed org-wide
 * across two workspaces, the default one and a second with people of its own, as Slack sends
 * such an install's payloads (the emulator's `orgInstall`). Records are the app's per workspace,
 * so what is scheduled in one is not listed in the other.
 */
import {
  DEFAULT_APP,
  DEFAULT_CHANNELS,
  DEFAULT_USERS,
  type SeedUser,
  type Workspace,
  type WorkspaceSeed,
} from "@onair/slack-emulator";

export const ORG = { id: "E0ONAIRORG", name: "On Air Org" } as const;
export const SECOND_TEAM = { id: "T0SECOND", name: "Second Workspace", domain: "onair-second" };

export const SECOND_PEOPLE: readonly SeedUser[] = [
  {
    id: "U0SIA0SECOND",
    name: "sia",
    real_name: "Sia Second-Admin",
    tz: "America/Los_Angeles",
    email: "sia@example.com",
    is_admin: true,
    title: "Second workspace admin",
    team_id: SECOND_TEAM.id,
  },
  {
    id: "U0SAM0SECOND",
    name: "sam",
    real_name: "Sam Second",
    tz: "Europe/London",
    email: "sam@example.com",
    title: "Events, second workspace",
    team_id: SECOND_TEAM.id,
  },
];

/**
 * Omar is a member of both workspaces, as people of an org often are: he acts in one at a time
 * (the page's workspace switch), and Slack names that one in his payloads.
 */
export const IN_BOTH: ReadonlySet<string> = new Set(["U0OMAR0ORG"]);

/** Channels both workspaces share (Slack's org-wide channels); the rest stay the first's. */
const SHARED = new Set(["C0GENERAL", "C0EVENTS"]);
const secondIds = SECOND_PEOPLE.map((u) => u.id);

export function orgSeed(botScopes: readonly string[]): WorkspaceSeed {
  return {
    botScopes,
    enterprise: { id: ORG.id, name: ORG.name, teams: [SECOND_TEAM] },
    orgInstall: true,
    users: [...DEFAULT_USERS, ...SECOND_PEOPLE],
    channels: [
      ...DEFAULT_CHANNELS.map((c) =>
        SHARED.has(c.id) ? { ...c, members: [...c.members, ...secondIds] } : c,
      ),
      {
        id: "C0SECONDHALL",
        name: "second-all-hands",
        members: [...secondIds, DEFAULT_APP.botUserId],
        purpose: "The second workspace's own channel",
      },
    ],
  };
}

/** The workspaces a person is a member of: their own, both for the people IN_BOTH. */
export function homesOf(ws: Workspace, user: string): string[] {
  if (!ws.enterprise) return [ws.team.id];
  if (IN_BOTH.has(user)) return workspacesOf(ws).map((w) => w.id);
  if (secondIds.includes(user)) return [SECOND_TEAM.id];
  return [ws.user(user)?.team_id ?? ws.team.id];
}

/**
 * The person now acts in `team`, one of theirs. The emulator sends a person's `team_id` in every
 * payload (and users.info), one per person; a move rewrites it, as Slack's payloads change when
 * someone switches workspace. False when the person is not a member there.
 */
export function moveTo(ws: Workspace, user: string, team: string): boolean {
  const u = ws.user(user);
  if (!u || !homesOf(ws, user).includes(team)) return false;
  (u as { team_id: string }).team_id = team;
  return true;
}

/**
 * A workspace file saved by a single-workspace run has the shared channels without the second
 * workspace's people: they are put back, so they can post where the org's seed has them.
 */
export function mendSharedChannels(ws: Workspace): void {
  for (const id of SHARED) {
    const ch = ws.channels.get(id);
    if (ch && !secondIds.some((u) => ch.members.has(u)))
      for (const u of secondIds) ch.members.add(u);
  }
}

/** The org's workspaces, the default one first; one when the playground is a single workspace. */
export function workspacesOf(ws: Workspace): Array<{ id: string; name: string }> {
  return [
    { id: ws.team.id, name: ws.team.name },
    ...(ws.enterprise?.teams ?? []).map((t) => ({ id: t.id, name: t.name })),
  ];
}

/** The workspace a person acts in: their own (an org's people carry team_id). */
export function teamOf(ws: Workspace, user: string): string {
  return ws.user(user)?.team_id ?? ws.team.id;
}
