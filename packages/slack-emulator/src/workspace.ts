import { randomHex } from "./ids.ts";
import type {
  AuthCode,
  FunctionDefinition,
  FunctionExecution,
  Json,
  Message,
  TokenRecord,
  ViewRecord,
  WorkspaceOptions,
} from "./model.ts";
import type { WorkspaceSeed } from "./seed.ts";
import { messageJson, viewJson } from "./shapes.ts";
import { Interactions } from "./triggers.ts";

export * from "./model.ts";

/** The default delay of a file share after files.completeUploadExternal answers (Workspace). */
export const DEFAULT_FILE_SHARE_DELAY_MS = 300;

/**
 * The emulated workspace: pure state and rules, no HTTP. It stands on three floors, each a
 * file: the directory (directory.ts: people, conversations, the clock), the message store
 * (messages.ts), and what interactions hand out (triggers.ts: trigger_ids, response_urls); this
 * top floor adds the state of views and tokens. Their rules are functions over the workspace
 * in views.ts (modals, App Home) and oauth.ts (tokens, the install); the JSON shapes Slack
 * returns are in shapes.ts. The server (server.ts) turns Web API calls into these operations;
 * the playground page reads the same objects.
 */
export class Workspace extends Interactions {
  readonly views = new Map<string, ViewRecord>();
  /** user → modal view ids, bottom first; at most VIEW_STACK_LIMIT */
  readonly modalStacks = new Map<string, string[]>();
  /** user → App Home view id */
  readonly homeViews = new Map<string, string>();
  readonly tokens = new Map<string, TokenRecord>();
  botToken: string;
  /** when set, oauth.v2.access issues expiring tokens with refresh tokens (token rotation) */
  tokenRotation: { expiresInSec: number } | undefined;
  /**
   * How long after files.completeUploadExternal answers its share appears in the channel: Slack
   * shares asynchronously (slackapi/bolt-js#2115: "the API response does not yet have complete
   * shares"). 0 shares before answering.
   */
  fileShareDelayMs = DEFAULT_FILE_SHARE_DELAY_MS;
  /** pending OAuth codes (oauth.ts) */
  readonly authCodes = new Map<string, AuthCode>();
  /** refresh token → whose (oauth.ts) */
  readonly refreshTokens = new Map<string, { userId: string; kind: "bot" | "user" }>();
  /** long-lived tokens already moved to rotation with oauth.v2.exchange (oauth.ts) */
  readonly exchanged = new Set<string>();
  /** refresh grants answered so far (oauth.ts) */
  refreshCount = 0;
  /** Slack refuses every refresh (invalid_refresh_token), as after the app's tokens were revoked */
  refusedRefresh = false;
  /** the custom steps the app declares (seed.functions) */
  readonly functions: ReadonlyMap<string, FunctionDefinition>;
  /** every run of a custom step, by function_execution_id (functions.ts) */
  readonly functionExecutions = new Map<string, FunctionExecution>();

  constructor(seed: WorkspaceSeed = {}, opts: WorkspaceOptions = {}) {
    super(seed, opts);
    this.functions = new Map(Object.entries(seed.functions ?? {}));
    this.botToken = seed.botToken ?? this.newToken("xoxb");
    this.tokens.set(this.botToken, {
      token: this.botToken,
      kind: "bot",
      userId: this.app.botUserId,
      scopes: [...(seed.botScopes ?? [])],
      expiresAt: undefined,
      refreshToken: undefined,
      revoked: false,
    });
  }

  /** a fresh token string (oauth.ts) */
  newToken(prefix: "xoxb" | "xoxp"): string {
    const n = () => String(Math.floor(Math.random() * 9e12) + 1e12);
    return `${prefix}-${n()}-${n()}-${randomHex(12)}`;
  }

  // What a person has open, read by views.ts, the driver, the playground and tests.

  /** The open modals of a user, bottom first. */
  stack(user: string): ViewRecord[] {
    return (this.modalStacks.get(user) ?? []).flatMap((id) => {
      const rec = this.views.get(id);
      return rec ? [rec] : [];
    });
  }

  topView(user: string): ViewRecord | undefined {
    const s = this.stack(user);
    return s[s.length - 1];
  }

  homeView(user: string): ViewRecord | undefined {
    const id = this.homeViews.get(user);
    return id === undefined ? undefined : this.views.get(id);
  }

  // The shapes the playground page shows (shapes.ts).

  messageJson(m: Message): Json {
    return messageJson(this, m);
  }

  viewJson(rec: ViewRecord): Json {
    return viewJson(rec);
  }
}

/** A workspace without a server, for the playground page or unit tests. */
export function createWorkspace(seed?: WorkspaceSeed, opts?: WorkspaceOptions): Workspace {
  return new Workspace(seed, opts);
}
