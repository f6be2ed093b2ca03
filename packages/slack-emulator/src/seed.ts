import type { FunctionDefinition } from "./model.ts";
/**
 * What a workspace starts with. Every part is optional in a seed: a part given replaces the
 * default part wholesale (give `users` and you get exactly those users).
 */

export interface SeedTeam {
  readonly id: string;
  readonly name: string;
  /** the subdomain: https://{domain}.slack.com */
  readonly domain: string;
}

export interface SeedUser {
  readonly id: string;
  /** the handle */
  readonly name: string;
  readonly real_name: string;
  /** IANA zone; tz_offset and tz_label are derived from it at the emulator's clock */
  readonly tz: string;
  readonly email: string;
  readonly is_admin?: boolean;
  readonly is_owner?: boolean;
  readonly is_primary_owner?: boolean;
  /** a multi-channel guest */
  readonly is_restricted?: boolean;
  /** a single-channel guest */
  readonly is_ultra_restricted?: boolean;
  /**
   * the person's own workspace: another workspace of the org (WorkspaceSeed.enterprise), or
   * another organization's, as seen in a Slack Connect channel; default this workspace
   */
  readonly team_id?: string;
  readonly title?: string;
}

export interface SeedChannel {
  readonly id: string;
  readonly name: string;
  readonly is_private?: boolean;
  /** a direct message between the members (two people, or a person and the bot) */
  readonly is_im?: boolean;
  /** a group DM (private, by invitation only, no name of its own) */
  readonly is_mpim?: boolean;
  readonly is_general?: boolean;
  readonly is_archived?: boolean;
  /** posting limits beyond membership (see Channel.posting) */
  readonly posting?: "read_only" | "thread_only";
  /** user ids; include the bot user's id for channels the app is in */
  readonly members: readonly string[];
  readonly topic?: string;
  readonly purpose?: string;
}

export interface SeedUsergroup {
  readonly id: string;
  readonly handle: string;
  readonly name: string;
  readonly description?: string;
  readonly users: readonly string[];
}

export interface SeedApp {
  readonly appId: string;
  readonly botId: string;
  readonly botUserId: string;
  /** the bot user's handle */
  readonly name: string;
  readonly clientId: string;
  readonly clientSecret: string;
}

export interface WorkspaceSeed {
  readonly team?: SeedTeam;
  readonly users?: readonly SeedUser[];
  readonly channels?: readonly SeedChannel[];
  readonly usergroups?: readonly SeedUsergroup[];
  readonly app?: Partial<SeedApp>;
  /** the pre-installed bot token (as if SLACK_BOT_TOKEN); generated when absent */
  readonly botToken?: string;
  /**
   * Exactly the scopes the installation granted that token (give the app manifest's bot scopes).
   * Default: none, so every call needing a scope answers missing_scope until they are given.
   */
  readonly botScopes?: readonly string[];
  /** who approves OAuth installs when the authorize URL names nobody; default: the owner */
  readonly installerUserId?: string;
  /**
   * The Enterprise organization this workspace belongs to, and its other workspaces (users name
   * theirs with `team_id`).
   */
  readonly enterprise?: SeedEnterprise;
  /**
   * The app is installed org-wide (needs `enterprise`): OAuth answers with `team: null` and the
   * enterprise, and every payload carries `is_enterprise_install: true`, `team: null`,
   * `view.app_installed_team_id` = the enterprise id, and the acting person's workspace in
   * `user.team_id` / `team_id` / `context_team_id`, as Slack sends them for such an install.
   */
  readonly orgInstall?: boolean;
  /**
   * The custom steps the app declares, as its manifest's `functions` (v1 form: parameters keyed
   * by name, with `is_required`); the driver runs only these (functionExecuted).
   */
  readonly functions?: Readonly<Record<string, FunctionDefinition>>;
}

export interface SeedEnterprise {
  readonly id: string;
  readonly name: string;
  /** the org's workspaces besides this one */
  readonly teams: readonly SeedTeam[];
}

export const DEFAULT_TEAM: SeedTeam = {
  id: "T0ONAIR",
  name: "On Air Playground",
  domain: "onair-playground",
};

/** Zones on three continents so rendering in each reader's own zone is visible. */
export const DEFAULT_USERS: readonly SeedUser[] = [
  {
    id: "U0ADA0ADMIN",
    name: "ada",
    real_name: "Ada Admin",
    tz: "America/New_York",
    email: "ada@example.com",
    is_admin: true,
    is_owner: true,
    is_primary_owner: true,
    title: "Workspace owner",
  },
  {
    id: "U0OMAR0ORG",
    name: "omar",
    real_name: "Omar Organizer",
    tz: "Europe/Berlin",
    email: "omar@example.com",
    title: "Events lead",
  },
  {
    id: "U0KEI0ORG",
    name: "kei",
    real_name: "Kei Organizer",
    tz: "Asia/Tokyo",
    email: "kei@example.com",
    title: "Producer",
  },
  {
    id: "U0MIA0MEMBER",
    name: "mia",
    real_name: "Mia Member",
    tz: "America/Los_Angeles",
    email: "mia@example.com",
  },
];

export const DEFAULT_APP: SeedApp = {
  appId: "A0ONAIR",
  botId: "B0ONAIR",
  botUserId: "U0ONAIRBOT",
  name: "onair",
  clientId: "1000000000001.2000000000002",
  clientSecret: "emulator-client-secret",
};

const everyone = DEFAULT_USERS.map((u) => u.id);
const [ADA, OMAR, KEI] = everyone as [string, string, string, string];
const BOT = DEFAULT_APP.botUserId;

/**
 * The bot is in #general, #events and #audit but not #town-hall (a public channel: joins and
 * chat:write.public can be exercised) nor #planning (a private channel: it does not exist for
 * the bot, as in Slack).
 */
export const DEFAULT_CHANNELS: readonly SeedChannel[] = [
  {
    id: "C0GENERAL",
    name: "general",
    is_general: true,
    members: [...everyone, BOT],
    purpose: "Everyone, everything",
  },
  {
    id: "C0EVENTS",
    name: "events",
    members: [...everyone, BOT],
    purpose: "Live event cards",
  },
  {
    id: "C0TOWNHALL",
    name: "town-hall",
    members: [...everyone],
    purpose: "Quarterly town hall",
  },
  {
    id: "C0AUDIT",
    name: "audit",
    is_private: true,
    members: [ADA, BOT],
    purpose: "Who scheduled, edited, cancelled, minted",
  },
  {
    id: "C0PLANNING",
    name: "planning",
    is_private: true,
    members: [ADA, OMAR, KEI],
    purpose: "Organizers plan here; the app is not invited",
  },
];

export const DEFAULT_USERGROUPS: readonly SeedUsergroup[] = [
  {
    id: "S0ORGANIZERS",
    handle: "organizers",
    name: "Organizers",
    description: "People who run live events",
    users: [OMAR, KEI],
  },
];
