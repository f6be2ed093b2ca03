import { randomHex } from "./ids.ts";

/**
 * The workspace's data model: people, conversations, messages, views, tokens, and Slack's
 * rules of time. Plain types and constants; the operations live in the workspace's floors
 * (directory.ts, messages.ts, triggers.ts, workspace.ts) and in views.ts, oauth.ts, shapes.ts.
 */

export type Json = Record<string, unknown>;

export interface User {
  readonly id: string;
  readonly team_id: string;
  readonly name: string;
  readonly real_name: string;
  readonly tz: string;
  readonly email: string | undefined;
  readonly is_admin: boolean;
  readonly is_owner: boolean;
  readonly is_primary_owner: boolean;
  readonly is_restricted: boolean;
  readonly is_ultra_restricted: boolean;
  readonly is_bot: boolean;
  readonly title: string;
  readonly bot_id?: string;
  /** a bot user's app (another app's bot, Workspace.addBot); the emulated app's is `app.appId` */
  readonly app_id?: string;
  deleted: boolean;
}

export interface Message {
  type: "message";
  ts: string;
  user: string;
  team: string;
  text: string;
  bot_id?: string;
  app_id?: string;
  blocks?: unknown[];
  attachments?: unknown[];
  metadata?: unknown;
  /** An admin locked this message's thread: no new replies (restricted_action_thread_locked). */
  thread_locked?: boolean;
  thread_ts?: string;
  reply_count?: number;
  reply_users?: string[];
  reply_users_count?: number;
  latest_reply?: string;
  subtype?: string;
  edited?: { user: string; ts: string };
  /** files shared with the message (files.completeUploadExternal) */
  files?: unknown[];
  /** the app's unfurls of the message's links (chat.unfurl), by URL */
  unfurls?: Record<string, unknown>;
}

export interface Channel {
  readonly id: string;
  readonly name: string;
  readonly is_private: boolean;
  readonly is_im: boolean;
  readonly is_mpim: boolean;
  readonly is_general: boolean;
  is_archived: boolean;
  /**
   * Who may post, beyond membership: "read_only" (an announcement channel: no app posts) or
   * "thread_only" (replies only, no top-level message). Undefined: anyone who may post.
   */
  posting?: "read_only" | "thread_only" | undefined;
  readonly created: number;
  readonly creator: string;
  /** for a DM: the human on the other side */
  readonly user?: string;
  readonly members: Set<string>;
  topic: string;
  purpose: string;
  /** top-level messages and thread replies, in ts order */
  readonly messages: Message[];
  /** what chat.delete (or delete_original) removed, in deletion order */
  readonly deleted: Message[];
}

export interface EphemeralMessage {
  readonly channel: string;
  readonly user: string;
  readonly ts: string;
  text: string;
  blocks?: unknown[];
  attachments?: unknown[];
  readonly thread_ts?: string;
  /** how it arrived: the Web API, a response_url, or the body of a slash command's ack */
  readonly via: "chat.postEphemeral" | "response_url" | "command_ack";
  replaced: boolean;
  deleted: boolean;
}

export interface ScheduledMessage {
  readonly id: string;
  readonly channel: string;
  readonly post_at: number;
  readonly date_created: number;
  readonly text: string;
  readonly blocks?: unknown[];
  readonly attachments?: unknown[];
  readonly thread_ts?: string;
  readonly author: string;
  /**
   * Scheduled with `metadata`: Slack's method page warns such a message "will not post", so it
   * is listed and can be deleted, but is dropped when its time comes (the emulator's mark).
   */
  readonly withMetadata?: boolean;
}

export interface SlackView {
  id: string;
  team_id: string;
  type: "modal" | "home";
  title: unknown;
  close: unknown;
  submit: unknown;
  blocks: unknown[];
  private_metadata: string;
  callback_id: string;
  state: { values: Record<string, Record<string, Json>> };
  hash: string;
  clear_on_close: boolean;
  notify_on_close: boolean;
  root_view_id: string | null;
  previous_view_id: string | null;
  app_id: string;
  external_id: string;
  app_installed_team_id: string;
  bot_id: string;
}

export interface ViewRecord {
  readonly view: SlackView;
  readonly user: string;
  closed: boolean;
  /** the last `response_action: errors` the app sent for it, shown under the inputs */
  errors: Record<string, string> | undefined;
}

export interface TokenRecord {
  readonly token: string;
  readonly kind: "bot" | "user";
  /** the bot user for bot tokens, the installer for user tokens */
  readonly userId: string;
  readonly scopes: readonly string[];
  /** ms since the epoch (emulator clock); undefined: never */
  readonly expiresAt: number | undefined;
  readonly refreshToken: string | undefined;
  revoked: boolean;
  /**
   * A function's token (function_executed's `bot_access_token`): the execution it was issued
   * for. It acts as the bot with the installation's scopes (a workflow token is a bot-token
   * subset) and completes only its own execution.
   */
  readonly execution?: string;
}

/** One input or output of a custom step, as the app's manifest declares it (v1 form). */
export interface FunctionParameter {
  readonly type: string;
  readonly title?: string;
  readonly description?: string;
  readonly is_required?: boolean;
}

/** A custom step the app declares (manifest `functions.<callback_id>`). */
export interface FunctionDefinition {
  readonly title: string;
  readonly description?: string;
  readonly input_parameters: Readonly<Record<string, FunctionParameter>>;
  readonly output_parameters: Readonly<Record<string, FunctionParameter>>;
}

/** A run of a custom step in a workflow, from function_executed to its completion. */
export interface FunctionExecution {
  /** function_execution_id */
  readonly id: string;
  readonly workflowExecutionId: string;
  readonly callbackId: string;
  /** the function's own id (Fn…) */
  readonly functionId: string;
  readonly inputs: Readonly<Json>;
  /** the bot_access_token sent with function_executed */
  readonly token: string;
  state: "running" | "completed" | "failed";
  outputs?: Json;
  error?: string;
  /** every functions.complete* call for this execution, accepted or not, in order */
  readonly completions: {
    readonly method: string;
    readonly ok: boolean;
    readonly error?: string;
    /** the execution's own token, or the app's bot token */
    readonly token: "function" | "bot";
  }[];
}

export interface MessageContent {
  readonly text?: string | undefined;
  readonly blocks?: unknown[] | undefined;
  readonly attachments?: unknown[] | undefined;
}

/** How a message came to be, for the notification record and the call's warnings. */
export interface PostOptions {
  /** a Web API method, "response_url", "command_ack", "scheduled", "user" */
  readonly via: string;
  /** records a warning on the call that made the message */
  readonly warn?: ((code: string) => void) | undefined;
  /** longest `text` accepted; default 40,000 (msg_too_long beyond) */
  readonly maxText?: number | undefined;
  /** URLs Slack linked in the text already (a scheduled message's, linked when scheduled) */
  readonly linked?: readonly string[] | undefined;
}

export interface ResponseUrlContext {
  readonly channel: string;
  readonly user: string;
  /** the message the interaction came from, for replace_original / delete_original */
  readonly messageTs?: string | undefined;
  readonly ephemeral?: boolean | undefined;
  readonly threadTs?: string | undefined;
}

export interface ResponseUrlRecord extends ResponseUrlContext {
  readonly createdAt: number;
  uses: number;
}

export interface TriggerRecord {
  readonly user: string;
  readonly issuedAt: number;
  used: boolean;
}

export interface AuthCode {
  readonly user: string;
  readonly scopes: readonly string[];
  readonly userScopes: readonly string[];
  readonly redirectUri: string | undefined;
  readonly createdAt: number;
  used: boolean;
}

export interface Usergroup {
  readonly id: string;
  readonly handle: string;
  readonly name: string;
  readonly description: string;
  readonly users: string[];
  readonly date_create: number;
}

export interface WorkspaceOptions {
  /** ms since the epoch; every time the workspace keeps comes from here */
  readonly now?: () => number;
  /** set by the server once it listens; response_url and permalinks are built from it */
  readonly origin?: string;
}

/** Slack's rules of time, in ms. */
export const TRIGGER_TTL_MS = 3_000;
export const RESPONSE_URL_TTL_MS = 30 * 60_000;
export const RESPONSE_URL_MAX_USES = 5;
export const AUTH_CODE_TTL_MS = 10 * 60_000;
export const SCHEDULE_HORIZON_SEC = 120 * 24 * 3600;
export const VIEW_STACK_LIMIT = 3;

const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Slack stores blocks with a block_id on every block and an action_id on every interactive
 * element, generating the ones the app left out; payloads then carry those ids.
 */
export function withIds(blocks: readonly unknown[]): unknown[] {
  const short = () => randomHex(3);
  return blocks.map((b) => {
    if (!isObj(b)) return b;
    const out: Json = structuredClone(b);
    if (typeof out.block_id !== "string") out.block_id = short();
    const fill = (el: unknown) => {
      if (isObj(el) && el.type !== "image" && typeof el.action_id !== "string") {
        el.action_id = short();
      }
    };
    if (Array.isArray(out.elements) && out.type === "actions") out.elements.forEach(fill);
    if (out.accessory !== undefined) fill(out.accessory);
    if (out.element !== undefined) fill(out.element);
    return out;
  });
}

export type ViewOutcome =
  | { action: "closed" }
  | { action: "cleared" }
  | { action: "errors"; errors: Record<string, string> }
  | { action: "updated"; view: SlackView }
  | { action: "pushed"; view: SlackView }
  | { action: "invalid"; reason: string; messages?: readonly string[] };
