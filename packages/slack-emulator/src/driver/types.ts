import type { FunctionExecution, Json, ViewOutcome, Workspace } from "../workspace.ts";

/** What a request the driver sends was, and what came back; the inputs of each kind. */

export type Forgery =
  | "bad-signature"
  | "stale-timestamp"
  | "future-timestamp"
  | "tampered-body"
  | "no-signature"
  | "no-timestamp";

export interface SendOptions {
  /** send a request Slack would never send, to prove the app refuses it */
  readonly forge?: Forgery;
  /** Slack's redelivery headers (x-slack-retry-num / x-slack-retry-reason) */
  readonly retryNum?: number;
  readonly retryReason?: string;
}

export interface DriverResult {
  /** the HTTP status; 0 when the app could not be reached */
  readonly status: number;
  /** parsed when JSON, else the text ("" for an empty ack) */
  readonly body: unknown;
  readonly headers: Record<string, string>;
  /** what was sent, parsed (the form fields, or the JSON payload) */
  readonly payload: Json;
  readonly triggerId?: string;
  readonly responseUrl?: string;
  /** how long the app took to answer, ms (wall clock) */
  readonly elapsedMs?: number;
  /**
   * the app answered after Slack's deadline (3 s): Slack had already given up, showed the person
   * its timeout (`operation_timeout` for a command) and did not use the answer
   */
  readonly late?: boolean;
  /** what Slack showed the person instead of the app's answer */
  readonly slackError?: "operation_timeout";
}

/** One Events API delivery attempt, first or redelivered. */
export interface Delivery {
  readonly eventId: string;
  /** 0 for the first delivery, then 1, 2, 3 (x-slack-retry-num) */
  readonly retryNum: number;
  /** why it was redelivered (x-slack-retry-reason), absent on the first */
  readonly retryReason?: string;
  /** 0 when the app could not be reached */
  readonly status: number;
  readonly elapsedMs: number;
  /** acknowledged with a 2xx within the deadline */
  readonly acked: boolean;
}

export interface ViewSubmissionResult extends DriverResult {
  /** what Slack did with the app's answer */
  readonly outcome: ViewOutcome;
}

export interface SlackDriverOptions {
  readonly appUrl: string;
  readonly signingSecret: string;
  readonly emulator: DriverTarget;
  /** clock for x-slack-request-timestamp; default Date.now (the app checks against its own) */
  readonly now?: () => number;
  /** default "/slack/events" */
  readonly path?: string;
  /** give up waiting for the app after this long; default 10 s */
  readonly timeoutMs?: number;
  /** Slack's deadline for an acknowledgement; default 3000 ms */
  readonly ackDeadlineMs?: number;
  /**
   * when an unacknowledged Events API callback is delivered again, ms after the failed attempt;
   * default Slack's [0, 60_000, 300_000] (three redeliveries); [] turns redelivery off
   */
  readonly redeliveryScheduleMs?: readonly number[];
}

/** The header value Slack sends: `v0=` + hex HMAC-SHA256 of `v0:{ts}:{body}`. */

type ValueInput = unknown;

export interface BlockActionInput extends SendOptions {
  readonly user: string;
  readonly action_id: string;
  readonly block_id?: string;
  /** the message's channel; with no message_ts the newest message there holding the action */
  readonly channel?: string;
  readonly message_ts?: string;
  /** the message is an ephemeral one shown to this user */
  readonly ephemeral?: boolean;
  /** a modal or App Home view; default: the user's top modal, then their App Home */
  readonly view_id?: string;
  /** a button's value (overrides the element's), a text input's value, or any raw value */
  readonly value?: ValueInput;
  readonly selected_option?: ValueInput;
  readonly selected_options?: ValueInput;
  readonly selected_user?: string;
  readonly selected_users?: readonly string[];
  readonly selected_conversation?: string;
  readonly selected_conversations?: readonly string[];
  readonly selected_channel?: string;
  readonly selected_channels?: readonly string[];
  readonly selected_date?: string;
  readonly selected_time?: string;
  readonly selected_date_time?: number | string | Date;
}

export interface ViewSubmissionInput extends SendOptions {
  readonly user: string;
  /** default: the user's top modal */
  readonly view_id?: string;
  /**
   * What the user typed or picked, keyed by action_id or by block_id (input blocks hold one
   * element). Values: a string for text/number/date ("2025-01-31") / time ("09:30"); seconds,
   * an ISO string or a Date for datetimepicker; an option value (or values) for selects,
   * checkboxes and radio buttons; user ids or handles for user pickers; channel ids or names
   * for conversation pickers. A full state object ({type, …}) is passed through as is.
   */
  readonly values?: Readonly<Record<string, ValueInput>>;
  /**
   * Slack's client refuses to submit an empty required input or a value outside the
   * element's bounds; the driver throws DriverError likewise. false sends it anyway.
   */
  readonly clientValidation?: boolean;
}

export interface SlashCommandInput extends SendOptions {
  readonly user: string;
  readonly channel: string;
  /** what the person typed after the command; escaped as Slack escapes it (should_escape) */
  readonly text?: string;
  /** send `text` exactly as given, already in Slack's escaped form */
  readonly escaped?: boolean;
  readonly command?: string;
}

export type ViewClosedInput = {
  user: string;
  view_id?: string;
  is_cleared?: boolean;
} & SendOptions;

export type ShortcutInput = {
  callback_id: string;
  user: string;
  channel?: string;
  message_ts?: string;
} & SendOptions;

export type PostMessageInput = {
  user: string;
  channel: string;
  text: string;
  unfurlDomains?: readonly string[];
} & SendOptions;

export type EventInput = { type: string; [k: string]: unknown };

export interface UninstallOptions {
  order?: "app_uninstalled-first" | "tokens_revoked-first";
  team?: string;
}

export interface OAuthInstallOptions {
  installPath?: string;
  user?: string;
  deny?: boolean;
}

export type FunctionExecutedInput = {
  /** a function the app declares (seed.functions) */
  callback_id: string;
  /** by input name; user and channel inputs may name a person or channel as elsewhere */
  inputs: Record<string, unknown>;
  /** false sends inputs Workflow Builder would not (a required one unset, a wrong type) */
  validate?: boolean;
} & SendOptions & { team?: string };

export interface SlackDriver {
  readonly appUrl: string;
  slashCommand(input: SlashCommandInput): Promise<DriverResult>;
  blockAction(input: BlockActionInput): Promise<DriverResult>;
  viewSubmission(input: ViewSubmissionInput): Promise<ViewSubmissionResult>;
  /** closes the top modal; sends view_closed only when the view asked (notify_on_close), else null */
  viewClosed(input: ViewClosedInput): Promise<DriverResult | null>;
  /** a global shortcut, or a message shortcut when channel and message_ts are given */
  shortcut(input: ShortcutInput): Promise<DriverResult>;
  /**
   * A person posts a message in a channel they are in. Links in it whose host is one of the
   * app's unfurl domains (or a subdomain) are sent to the app as one link_shared event, as Slack
   * does; `result` is undefined when no link matched.
   */
  postMessage(
    input: PostMessageInput,
  ): Promise<{ ts: string; unfurlId?: string; result?: DriverResult }>;
  /**
   * an Events API callback; app_home_opened gets its channel, tab and view filled in. `team`:
   * the workspace it happened in (default the person's own; on an org-wide install the
   * enterprise id makes it an org-level event)
   */
  event(event: EventInput, opts?: SendOptions & { team?: string }): Promise<DriverResult>;
  /**
   * revokes every token, then sends app_uninstalled and tokens_revoked in the order asked; on an
   * org-wide install `team` names one workspace removing the app (app_uninstalled there only,
   * the org's tokens stay)
   */
  uninstall(opts?: UninstallOptions): Promise<DriverResult[]>;
  urlVerification(challenge?: string, opts?: SendOptions): Promise<DriverResult>;
  /**
   * A workflow runs one of the app's custom steps: function_executed with the inputs and the
   * execution's own token; `execution` is then completed by the app's functions.complete* call.
   */
  functionExecuted(
    input: FunctionExecutedInput,
  ): Promise<DriverResult & { execution: FunctionExecution }>;
  /**
   * The OAuth install as a browser does it: GET the app's install page, follow its link to
   * the emulator's authorize endpoint (approved by `user`, default the owner, or denied),
   * then GET the app's redirect with the code, state and the app's state cookie.
   */
  oauthInstall(opts?: OAuthInstallOptions): Promise<{
    install: DriverResult;
    authorizeUrl: string;
    callbackUrl: string;
    callback: DriverResult;
  }>;
  /** a raw signed POST to the events path */
  send(rawBody: string, contentType: string, opts?: SendOptions): Promise<DriverResult>;
  /** Slack's unsigned `ssl_check=1` POST, as sent when a request URL is saved */
  sslCheck(): Promise<DriverResult>;
  /**
   * every request the app answered after Slack's deadline: what it was (the command, the
   * interaction's type, event_callback) and how long it took
   */
  readonly timeouts: readonly { readonly kind: string; readonly elapsedMs: number }[];
  /** every Events API delivery so far, redeliveries included, in order */
  readonly deliveries: readonly Delivery[];
  /** resolves once no redelivery is pending */
  settled(): Promise<void>;
  /** drops every pending redelivery */
  cancelRedeliveries(): void;
}

/** What the driver needs of the emulator: its workspace and its authorize endpoint. */
export interface DriverTarget {
  readonly workspace: Workspace;
  readonly authorizeUrl: string;
}
