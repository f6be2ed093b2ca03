import type { Channel, User, Workspace } from "../workspace.ts";
import { DriverError, type Resolvers } from "./state.ts";
import { createTransport, type Transport } from "./transport.ts";
import type { SlackDriverOptions } from "./types.ts";

/**
 * What every kind of request the driver sends shares: the workspace it plays, the wire to the
 * app (transport.ts), and who and where a request names, as Slack puts them in a payload.
 */
export interface DriverContext extends Transport {
  readonly ws: Workspace;
  /** the driver's clock (x-slack-request-timestamp, event_time, action_ts) */
  readonly now: () => number;
  readonly appUrl: string;
  /** the emulator's OAuth authorize endpoint */
  readonly authorizeUrl: string;
  readonly timeoutMs: number;
  readonly deadlineMs: number;
  /** the enterprise of an org-wide install, else undefined */
  readonly org: Workspace["enterprise"];
  readonly resolvers: Resolvers;
  userOf(ref: string): User;
  channelOf(ref: string): Channel;
  /** the payload's `team`: null on an org-wide install */
  team(): { id: string; domain: string } | null;
  /** the payload's enterprise fields */
  enterprise(): { enterprise: { id: string; name: string } | null; is_enterprise_install: boolean };
  domainOf(teamId: string): string;
  userPayload(u: User): { id: string; username: string; name: string; team_id: string };
  /** Slack's action_ts / event_ts: seconds with microseconds */
  actionTs(): string;
}

export function createContext(opts: SlackDriverOptions): DriverContext {
  const appUrl = opts.appUrl.replace(/\/+$/, "");
  const ws = opts.emulator.workspace;
  const now = opts.now ?? Date.now;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const deadlineMs = opts.ackDeadlineMs ?? 3_000;
  const transport = createTransport({
    appUrl,
    path: opts.path ?? "/slack/events",
    signingSecret: opts.signingSecret,
    now,
    timeoutMs,
    deadlineMs,
    schedule: opts.redeliveryScheduleMs ?? [0, 60_000, 300_000],
  });

  const userOf = (ref: string): User => {
    const u = ws.user(ref) ?? ws.userByName(ref.replace(/^@/, ""));
    if (!u) throw new DriverError(`no user ${ref} in the workspace`);
    return u;
  };
  const channelOf = (ref: string): Channel => {
    const c = ws.resolveChannel(ref);
    if (!c) throw new DriverError(`no channel ${ref} in the workspace`);
    return c;
  };
  // An org-wide install: Slack sends `team: null`, the enterprise, and the acting person's own
  // workspace in user.team_id (events: team_id and context_team_id).
  const org = ws.orgInstall && ws.enterprise ? ws.enterprise : undefined;

  return {
    ...transport,
    ws,
    now,
    appUrl,
    authorizeUrl: opts.emulator.authorizeUrl,
    timeoutMs,
    deadlineMs,
    org,
    resolvers: {
      userId: (ref) => userOf(ref).id,
      channelId: (ref) => channelOf(ref).id,
    },
    userOf,
    channelOf,
    team: () => (org ? null : { id: ws.team.id, domain: ws.team.domain }),
    enterprise: () => ({
      enterprise: ws.enterprise ? { id: ws.enterprise.id, name: ws.enterprise.name } : null,
      is_enterprise_install: org !== undefined,
    }),
    domainOf: (teamId) =>
      [ws.team, ...(ws.enterprise?.teams ?? [])].find((t) => t.id === teamId)?.domain ??
      teamId.toLowerCase(),
    userPayload: (u) => ({ id: u.id, username: u.name, name: u.name, team_id: u.team_id }),
    actionTs: () => (now() / 1000).toFixed(6),
  };
}
