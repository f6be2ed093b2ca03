// Longer than the project's ~400 lines: one closure holds the driver's state (the app's URL,
// the signing secret, pending redeliveries) for every kind of request Slack sends; payload
// details that need no state live in driver-state.ts.
import { createHmac } from "node:crypto";
import { clientCheck, DriverError, elementsOf, stateOf, toState } from "./driver-state.ts";
import { SlackApiError } from "./errors.ts";
import { randomHex } from "./ids.ts";
import { recordSharedLinks } from "./methods/files.ts";
import type { SlackEmulator } from "./server.ts";
import { escapeSlashText } from "./slash-text.js";
import { initialState } from "./view-state.js";
import type {
  Channel,
  EphemeralMessage,
  Json,
  Message,
  User,
  ViewOutcome,
  ViewRecord,
  Workspace,
} from "./workspace.ts";

/**
 * Plays Slack's side towards the app: slash commands, interactions and Events API
 * callbacks, signed exactly as Slack signs them (v0, HMAC-SHA256 over
 * `v0:{timestamp}:{raw body}`), posted to `${appUrl}/slack/events`. Payloads are built from
 * the emulator's state (the stored message or view the user acts on), with fresh trigger_ids
 * and response_urls the emulator honours. What Slack does with the app's answer (a slash
 * command's ack body, a view_submission's response_action) is applied to the workspace.
 *
 * Slack's clock is kept too: a slash command or interaction not acknowledged within 3 seconds
 * is a timeout (the person sees "operation_timeout"; the late answer is not used), an Events API
 * callback not acknowledged in time (or answered with an error) is delivered again, nearly at
 * once, then after a minute, then after five (api.slack.com/apis/events-api, "Error handling":
 * x-slack-retry-num 1–3, x-slack-retry-reason http_timeout / http_error / connection_failed).
 * `ssl_check=1` is sent unsigned, as Slack sends it when a request URL is saved.
 */

export { DriverError };

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
  readonly emulator: SlackEmulator;
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
export function signSlackRequest(signingSecret: string, timestampSec: number, rawBody: string) {
  return `v0=${createHmac("sha256", signingSecret).update(`v0:${timestampSec}:${rawBody}`).digest("hex")}`;
}

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

export interface SlackDriver {
  readonly appUrl: string;
  slashCommand(input: SlashCommandInput): Promise<DriverResult>;
  blockAction(input: BlockActionInput): Promise<DriverResult>;
  viewSubmission(input: ViewSubmissionInput): Promise<ViewSubmissionResult>;
  /** closes the top modal; sends view_closed only when the view asked (notify_on_close), else null */
  viewClosed(
    input: { user: string; view_id?: string; is_cleared?: boolean } & SendOptions,
  ): Promise<DriverResult | null>;
  /** a global shortcut, or a message shortcut when channel and message_ts are given */
  shortcut(
    input: {
      callback_id: string;
      user: string;
      channel?: string;
      message_ts?: string;
    } & SendOptions,
  ): Promise<DriverResult>;
  /**
   * A person posts a message in a channel they are in. Links in it whose host is one of the
   * app's unfurl domains (or a subdomain) are sent to the app as one link_shared event, as Slack
   * does; `result` is undefined when no link matched.
   */
  postMessage(
    input: {
      user: string;
      channel: string;
      text: string;
      unfurlDomains?: readonly string[];
    } & SendOptions,
  ): Promise<{ ts: string; unfurlId?: string; result?: DriverResult }>;
  /**
   * an Events API callback; app_home_opened gets its channel, tab and view filled in. `team`:
   * the workspace it happened in (default the person's own; on an org-wide install the
   * enterprise id makes it an org-level event)
   */
  event(
    event: { type: string; [k: string]: unknown },
    opts?: SendOptions & { team?: string },
  ): Promise<DriverResult>;
  /**
   * revokes every token, then sends app_uninstalled and tokens_revoked in the order asked; on an
   * org-wide install `team` names one workspace removing the app (app_uninstalled there only,
   * the org's tokens stay)
   */
  uninstall(opts?: {
    order?: "app_uninstalled-first" | "tokens_revoked-first";
    team?: string;
  }): Promise<DriverResult[]>;
  urlVerification(challenge?: string, opts?: SendOptions): Promise<DriverResult>;
  /**
   * The OAuth install as a browser does it: GET the app's install page, follow its link to
   * the emulator's authorize endpoint (approved by `user`, default the owner, or denied),
   * then GET the app's redirect with the code, state and the app's state cookie.
   */
  oauthInstall(opts?: { installPath?: string; user?: string; deny?: boolean }): Promise<{
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

/** Links in message text (`<url>`, `<url|label>` or bare) whose host is an unfurl domain. */
function linksIn(text: string, domains: readonly string[]): Array<{ domain: string; url: string }> {
  const out: Array<{ domain: string; url: string }> = [];
  for (const m of text.matchAll(/<(https?:\/\/[^|>\s]+)(?:\|[^>]*)?>|(https?:\/\/[^\s<>]+)/g)) {
    const url = m[1] ?? m[2] ?? "";
    let host: string;
    try {
      host = new URL(url).hostname.toLowerCase();
    } catch {
      continue;
    }
    const domain = domains.find((d) => host === d || host.endsWith(`.${d}`));
    if (domain && !out.some((l) => l.url === url)) out.push({ domain: host, url });
  }
  return out;
}

const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

// ------------------------------------------------------------------ element helpers

interface Found {
  readonly block: Json;
  readonly element: Json;
}

function findElement(
  blocks: readonly unknown[],
  actionId: string,
  blockId?: string,
): Found | undefined {
  for (const b of blocks) {
    if (!isObj(b) || (blockId !== undefined && b.block_id !== blockId)) continue;
    for (const el of elementsOf(b)) if (el.action_id === actionId) return { block: b, element: el };
  }
  return undefined;
}

function actionIds(blocks: readonly unknown[]): string[] {
  return blocks.flatMap((b) => (isObj(b) ? elementsOf(b).map((e) => String(e.action_id)) : []));
}

// ------------------------------------------------------------------ the driver

export function createSlackDriver(opts: SlackDriverOptions): SlackDriver {
  const appUrl = opts.appUrl.replace(/\/+$/, "");
  const emulator = opts.emulator;
  const ws: Workspace = emulator.workspace;
  const now = opts.now ?? Date.now;
  const path = opts.path ?? "/slack/events";
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const deadlineMs = opts.ackDeadlineMs ?? 3_000;
  const schedule = opts.redeliveryScheduleMs ?? [0, 60_000, 300_000];
  const deliveries: Delivery[] = [];
  const timeouts: { kind: string; elapsedMs: number }[] = [];
  const pending = new Set<{ timer: NodeJS.Timeout | undefined; done: Promise<void> }>();
  const resolvers = {
    userId: (ref: string) => userOf(ref).id,
    channelId: (ref: string) => channelOf(ref).id,
  };

  function userOf(ref: string): User {
    const u = ws.user(ref) ?? ws.userByName(ref.replace(/^@/, ""));
    if (!u) throw new DriverError(`no user ${ref} in the workspace`);
    return u;
  }

  function channelOf(ref: string): Channel {
    const c = ws.resolveChannel(ref);
    if (!c) throw new DriverError(`no channel ${ref} in the workspace`);
    return c;
  }

  // An org-wide install: Slack sends `team: null`, the enterprise, and the acting person's own
  // workspace in user.team_id (events: team_id and context_team_id).
  const org = ws.orgInstall && ws.enterprise ? ws.enterprise : undefined;
  const team = () => (org ? null : { id: ws.team.id, domain: ws.team.domain });
  const enterprise = () => ({
    enterprise: ws.enterprise ? { id: ws.enterprise.id, name: ws.enterprise.name } : null,
    is_enterprise_install: org !== undefined,
  });
  const domainOf = (teamId: string) =>
    [ws.team, ...(ws.enterprise?.teams ?? [])].find((t) => t.id === teamId)?.domain ??
    teamId.toLowerCase();
  const userPayload = (u: User) => ({
    id: u.id,
    username: u.name,
    name: u.name,
    team_id: u.team_id,
  });
  const actionTs = () => (now() / 1000).toFixed(6);

  async function send(rawBody: string, contentType: string, o: SendOptions = {}) {
    let ts = Math.floor(now() / 1000);
    if (o.forge === "stale-timestamp") ts -= 6 * 60;
    if (o.forge === "future-timestamp") ts += 6 * 60;
    const secret = o.forge === "bad-signature" ? `${opts.signingSecret}-not` : opts.signingSecret;
    const signature = signSlackRequest(secret, ts, rawBody);
    // Tampering after signing: one character more, still well-formed for both encodings.
    const body = o.forge === "tampered-body" ? `${rawBody} ` : rawBody;
    const headers: Record<string, string> = {
      "content-type": contentType,
      "user-agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
    };
    if (o.forge !== "no-timestamp") headers["x-slack-request-timestamp"] = String(ts);
    if (o.forge !== "no-signature") headers["x-slack-signature"] = signature;
    if (o.retryNum !== undefined) {
      headers["x-slack-retry-num"] = String(o.retryNum);
      headers["x-slack-retry-reason"] = o.retryReason ?? "http_timeout";
    }
    const r = await post(headers, body);
    if (r.late) timeouts.push({ kind: kindOf(contentType, rawBody), elapsedMs: r.elapsedMs });
    return r;
  }

  /** What a request was, for the timeouts record: a command, an interaction, an event. */
  function kindOf(contentType: string, rawBody: string): string {
    try {
      if (contentType.includes("json")) return String((JSON.parse(rawBody) as Json).type);
      const form = new URLSearchParams(rawBody);
      const payload = form.get("payload");
      if (payload !== null) return String((JSON.parse(payload) as Json).type);
      return form.get("command") ?? "unknown";
    } catch {
      return "unknown";
    }
  }

  async function post(headers: Record<string, string>, body: string) {
    const started = performance.now();
    const res = await fetch(`${appUrl}${path}`, {
      method: "POST",
      headers,
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
    });
    const r = await readResult(res);
    const elapsedMs = Math.round(performance.now() - started);
    const late = elapsedMs > deadlineMs;
    return { ...r, elapsedMs, late, ...(late && { slackError: "operation_timeout" as const }) };
  }

  async function readResult(res: Response) {
    const text = await res.text();
    const headers = Object.fromEntries(res.headers.entries());
    let body: unknown = text;
    if ((headers["content-type"] ?? "").includes("json") || /^\s*[{[]/.test(text)) {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    return { status: res.status, body, headers };
  }

  async function sendForm(fields: Json, o: SendOptions) {
    const form = new URLSearchParams();
    for (const [k, v] of Object.entries(fields)) if (v !== undefined) form.set(k, String(v));
    const r = await send(form.toString(), "application/x-www-form-urlencoded", o);
    return { ...r, payload: fields };
  }

  async function sendPayload(payload: Json, o: SendOptions) {
    const form = new URLSearchParams({ payload: JSON.stringify(payload) });
    const r = await send(form.toString(), "application/x-www-form-urlencoded", o);
    return { ...r, payload };
  }

  async function sendEvent(payload: Json, o: SendOptions) {
    const r = await send(JSON.stringify(payload), "application/json", o);
    return { ...r, payload };
  }

  /**
   * An Events API callback as Slack delivers it: when the app does not acknowledge it with a 2xx
   * within the deadline, it is delivered again on Slack's schedule with x-slack-retry-num and
   * x-slack-retry-reason, while the late first attempt may still be running in the app.
   */
  function deliverEvent(payload: Json, o: SendOptions): Promise<DriverResult> {
    const rawBody = JSON.stringify(payload);
    const eventId = String(payload.event_id);
    // A forged request is not Slack's, and a test that names the retry itself wants one send.
    const automatic = o.forge === undefined && o.retryNum === undefined;

    const attempt = (retryNum: number, reason: string | undefined): Promise<DriverResult> => {
      let failed = false;
      const fail = (why: string) => {
        if (failed || !automatic) return;
        failed = true;
        redeliver(retryNum, why);
      };
      const timer = setTimeout(() => fail("http_timeout"), deadlineMs);
      timer.unref();
      const sendOpts: SendOptions =
        retryNum > 0 ? { ...o, retryNum, retryReason: reason ?? "http_timeout" } : o;
      const started = performance.now();
      return send(rawBody, "application/json", sendOpts).then(
        (r) => {
          clearTimeout(timer);
          const acked = r.status >= 200 && r.status < 300 && !r.late;
          deliveries.push({
            eventId,
            retryNum,
            ...(retryNum > 0 && { retryReason: reason ?? "http_timeout" }),
            status: r.status,
            elapsedMs: r.elapsedMs,
            acked,
          });
          if (!acked) fail(r.late ? "http_timeout" : "http_error");
          return { ...r, payload };
        },
        (err: unknown) => {
          clearTimeout(timer);
          const elapsedMs = Math.round(performance.now() - started);
          deliveries.push({
            eventId,
            retryNum,
            ...(retryNum > 0 && { retryReason: reason ?? "http_timeout" }),
            status: 0,
            elapsedMs,
            acked: false,
          });
          fail("connection_failed");
          return { status: 0, body: String(err), headers: {}, payload, elapsedMs, late: false };
        },
      );
    };

    const redeliver = (after: number, reason: string) => {
      const delay = schedule[after];
      if (delay === undefined) return;
      let release: () => void = () => {};
      const entry = {
        timer: undefined as NodeJS.Timeout | undefined,
        done: new Promise<void>((r) => {
          release = r;
        }),
      };
      entry.timer = setTimeout(() => {
        attempt(after + 1, reason).finally(() => {
          pending.delete(entry);
          release();
        });
      }, delay);
      entry.timer.unref();
      pending.add(entry);
    };

    return attempt(o.retryNum ?? 0, o.retryReason);
  }

  /** What Slack shows for a slash command's ack body: a message, ephemeral unless in_channel. */
  function applyCommandAck(ch: Channel, user: User, body: unknown): void {
    let msg: Json | undefined;
    if (typeof body === "string" && body.trim() !== "") msg = { text: body };
    else if (isObj(body) && (body.text !== undefined || body.blocks !== undefined)) msg = body;
    if (!msg) return;
    const content = {
      text: typeof msg.text === "string" ? msg.text : undefined,
      blocks: Array.isArray(msg.blocks) ? msg.blocks : undefined,
    };
    try {
      if (msg.response_type === "in_channel") {
        ws.postMessage(ch, ws.app.botUserId, content, { via: "command_ack" });
      } else ws.postEphemeral(ch, user.id, content, "command_ack");
    } catch (err) {
      // Slack shows the user an error instead; the body is in the result for the test to see.
      if (!(err instanceof SlackApiError)) throw err;
    }
  }

  function openModal(user: User, viewId: string | undefined): ViewRecord {
    const rec = viewId === undefined ? ws.topView(user.id) : ws.views.get(viewId);
    if (!rec || rec.closed || rec.view.type !== "modal") {
      throw new DriverError(`${user.name} has no open modal${viewId ? ` ${viewId}` : ""}`);
    }
    if (rec.user !== user.id) throw new DriverError(`view ${rec.view.id} belongs to another user`);
    if (ws.topView(user.id)?.view.id !== rec.view.id) {
      throw new DriverError(`view ${rec.view.id} is not on top of ${user.name}'s modal stack`);
    }
    return rec;
  }

  const driver: SlackDriver = {
    appUrl,

    async slashCommand(input) {
      const user = userOf(input.user);
      const ch = channelOf(input.channel);
      if ((ch.is_private || ch.is_im || ch.is_mpim) && !ch.members.has(user.id)) {
        throw new DriverError(`${user.name} is not in ${ch.name} and cannot type a command there`);
      }
      const typed = input.text ?? "";
      const text = input.escaped ? typed : escapeSlashText(typed, ws.directory(user.id));
      const triggerId = ws.issueTriggerId(user.id);
      const responseUrl = ws.createResponseUrl({ channel: ch.id, user: user.id });
      const r = await sendForm(
        {
          token: ws.verificationToken,
          team_id: org ? user.team_id : ws.team.id,
          team_domain: org ? domainOf(user.team_id) : ws.team.domain,
          ...(ws.enterprise && {
            enterprise_id: ws.enterprise.id,
            enterprise_name: ws.enterprise.name,
          }),
          channel_id: ch.id,
          channel_name: ch.is_im ? "directmessage" : ch.name,
          user_id: user.id,
          user_name: user.name,
          command: input.command ?? "/onair",
          text,
          api_app_id: ws.app.appId,
          is_enterprise_install: String(org !== undefined),
          response_url: responseUrl,
          trigger_id: triggerId,
        },
        input,
      );
      // A late answer is not used: Slack has already told the person the command timed out.
      if (r.status === 200 && input.forge === undefined && !r.late) {
        applyCommandAck(ch, user, r.body);
      }
      return { ...r, triggerId, responseUrl };
    },

    async blockAction(input) {
      const user = userOf(input.user);
      let blocks: readonly unknown[] = [];
      let container: Json = {};
      let extra: Json = {};
      let responseUrl: string | undefined;
      let viewRec: ViewRecord | undefined;
      let storedState: Record<string, Record<string, Json>> = {};

      const fromView = (rec: ViewRecord) => {
        viewRec = rec;
        blocks = rec.view.blocks;
        storedState = rec.view.state.values;
        container = { type: "view", view_id: rec.view.id };
      };
      const fromMessage = (ch: Channel, m: Message | EphemeralMessage, ephemeral: boolean) => {
        blocks = m.blocks ?? [];
        container = {
          type: "message",
          message_ts: m.ts,
          channel_id: ch.id,
          is_ephemeral: ephemeral,
        };
        extra = {
          channel: { id: ch.id, name: ch.is_im ? "directmessage" : ch.name },
          ...(!ephemeral && { message: ws.messageJson(m as Message) }),
        };
        responseUrl = ws.createResponseUrl({
          channel: ch.id,
          user: user.id,
          messageTs: m.ts,
          ephemeral,
          threadTs: m.thread_ts,
        });
      };

      if (input.view_id !== undefined) {
        const rec = ws.views.get(input.view_id);
        if (!rec || rec.closed) throw new DriverError(`no open view ${input.view_id}`);
        fromView(rec);
      } else if (input.channel !== undefined) {
        const ch = channelOf(input.channel);
        const ephemerals = ws.ephemeralsFor({ channel: ch.id, user: user.id });
        let target: { m: Message | EphemeralMessage; eph: boolean } | undefined;
        if (input.message_ts !== undefined) {
          const m = ws.findMessage(ch, input.message_ts);
          const e = ephemerals.find((x) => x.ts === input.message_ts);
          if (m && !input.ephemeral) target = { m, eph: false };
          else if (e) target = { m: e, eph: true };
        } else {
          const holds = (m: Message | EphemeralMessage) =>
            findElement(m.blocks ?? [], input.action_id, input.block_id) !== undefined;
          const pool: { m: Message | EphemeralMessage; eph: boolean }[] = [
            ...(input.ephemeral === true ? [] : ch.messages.map((m) => ({ m, eph: false }))),
            ...(input.ephemeral === false ? [] : ephemerals.map((m) => ({ m, eph: true }))),
          ];
          target = pool.filter((x) => holds(x.m)).sort((a, b) => (a.m.ts < b.m.ts ? 1 : -1))[0];
        }
        if (!target) {
          throw new DriverError(
            `no message in ${ch.name}${input.message_ts ? ` at ${input.message_ts}` : ""} with action ${input.action_id}`,
          );
        }
        fromMessage(ch, target.m, target.eph);
      } else {
        const top = ws.topView(user.id);
        const home = ws.homeView(user.id);
        const rec = [top, home].find(
          (r) => r && findElement(r.view.blocks, input.action_id, input.block_id) !== undefined,
        );
        if (!rec) throw new DriverError(`${user.name} sees no view with action ${input.action_id}`);
        fromView(rec);
      }

      const found = findElement(blocks, input.action_id, input.block_id);
      if (!found) {
        throw new DriverError(
          `action ${input.action_id} not found; the surface has: ${actionIds(blocks).join(", ")}`,
        );
      }
      const { block, element } = found;
      const blockId = String(block.block_id);
      const actionId = String(element.action_id);
      const raw =
        input.selected_option ??
        input.selected_options ??
        input.selected_user ??
        input.selected_users ??
        input.selected_conversation ??
        input.selected_conversations ??
        input.selected_channel ??
        input.selected_channels ??
        input.selected_date ??
        input.selected_time ??
        input.selected_date_time ??
        input.value;

      let action: Json;
      if (element.type === "button" || element.type === "workflow_button") {
        action = {
          type: element.type,
          action_id: actionId,
          block_id: blockId,
          text: element.text,
          ...(element.style !== undefined && { style: element.style }),
          ...(element.url !== undefined && { url: element.url }),
          ...((raw ?? element.value) !== undefined && { value: String(raw ?? element.value) }),
          action_ts: actionTs(),
        };
      } else {
        const state =
          raw === undefined
            ? (storedState[blockId]?.[actionId] ?? initialState(element))
            : toState(element, raw, resolvers);
        if (!state) throw new DriverError(`cannot act on a ${String(element.type)}`);
        if (viewRec && element.type !== "overflow") {
          const stored = viewRec.view.state.values;
          stored[blockId] = { ...stored[blockId], [actionId]: state };
        }
        action = { ...state, action_id: actionId, block_id: blockId, action_ts: actionTs() };
      }

      const triggerId = ws.issueTriggerId(user.id);
      const payload: Json = {
        type: "block_actions",
        user: userPayload(user),
        api_app_id: ws.app.appId,
        token: ws.verificationToken,
        container: container,
        trigger_id: triggerId,
        team: team(),
        ...enterprise(),
        ...extra,
        // Slack's view.state.values holds every input, untouched ones at their initial value.
        ...(viewRec && {
          view: {
            ...ws.viewJson(viewRec),
            state: { values: stateOf(viewRec.view.blocks, viewRec.view.state.values) },
          },
        }),
        state: {
          values: viewRec ? stateOf(blocks, viewRec.view.state.values) : stateOf(blocks, {}),
        },
        ...(responseUrl !== undefined && { response_url: responseUrl }),
        actions: [action],
      };
      const r = await sendPayload(payload, input);
      return { ...r, triggerId, ...(responseUrl !== undefined && { responseUrl }) };
    },

    async viewSubmission(input) {
      const user = userOf(input.user);
      const rec = openModal(user, input.view_id);
      const values = stateOf(rec.view.blocks, rec.view.state.values);
      for (const [key, raw] of Object.entries(input.values ?? {})) {
        const hits: { blockId: string; el: Json }[] = [];
        for (const b of rec.view.blocks) {
          if (!isObj(b)) continue;
          for (const el of elementsOf(b)) {
            if (!initialState(el)) continue;
            if (el.action_id === key || (b.block_id === key && b.type === "input")) {
              hits.push({ blockId: String(b.block_id), el });
            }
          }
        }
        const hit = hits[0];
        if (!hit)
          throw new DriverError(`no input ${key} in view ${rec.view.callback_id || rec.view.id}`);
        if (hits.length > 1)
          throw new DriverError(`${key} names more than one input; use the block_id`);
        values[hit.blockId] = {
          ...values[hit.blockId],
          [String(hit.el.action_id)]: toState(hit.el, raw, resolvers),
        };
      }
      if (input.clientValidation !== false) clientCheck(rec, values);
      rec.view.state.values = values;
      rec.errors = undefined;

      const responseUrls: Json[] = [];
      for (const b of rec.view.blocks) {
        if (!isObj(b) || b.type !== "input" || !isObj(b.element)) continue;
        const el = b.element;
        if (el.response_url_enabled !== true) continue;
        const s = values[String(b.block_id)]?.[String(el.action_id)];
        const channel = (s?.selected_conversation ?? s?.selected_channel) as string | undefined;
        if (!channel) continue;
        responseUrls.push({
          block_id: b.block_id,
          action_id: el.action_id,
          channel_id: channel,
          response_url: ws.createResponseUrl({ channel, user: user.id }),
        });
      }

      const triggerId = ws.issueTriggerId(user.id);
      const payload: Json = {
        type: "view_submission",
        team: team(),
        user: userPayload(user),
        api_app_id: ws.app.appId,
        token: ws.verificationToken,
        trigger_id: triggerId,
        view: ws.viewJson(rec),
        response_urls: responseUrls,
        ...enterprise(),
      };
      const r = await sendPayload(payload, input);
      const outcome: ViewOutcome =
        r.status === 200 && input.forge === undefined && !r.late
          ? ws.applyViewSubmissionResponse(user.id, rec.view.id, r.body)
          : {
              action: "invalid",
              reason: r.late
                ? `the app answered after ${r.elapsedMs} ms; Slack gave up at ${deadlineMs} ms`
                : `the app answered HTTP ${r.status}`,
            };
      return { ...r, triggerId, outcome };
    },

    async viewClosed(input) {
      const user = userOf(input.user);
      const rec = openModal(user, input.view_id);
      const notify = rec.view.notify_on_close;
      const json = ws.viewJson(rec);
      ws.closeView(user.id, rec.view.id, input.is_cleared === true);
      if (!notify) return null;
      return sendPayload(
        {
          type: "view_closed",
          team: team(),
          user: userPayload(user),
          api_app_id: ws.app.appId,
          token: ws.verificationToken,
          view: json,
          is_cleared: input.is_cleared === true,
          ...enterprise(),
        },
        input,
      );
    },

    async shortcut(input) {
      const user = userOf(input.user);
      const triggerId = ws.issueTriggerId(user.id);
      const base = {
        callback_id: input.callback_id,
        trigger_id: triggerId,
        user: userPayload(user),
        team: team(),
        token: ws.verificationToken,
        action_ts: actionTs(),
        ...enterprise(),
      };
      if (input.channel !== undefined && input.message_ts !== undefined) {
        const ch = channelOf(input.channel);
        const m = ws.findMessage(ch, input.message_ts);
        if (!m) throw new DriverError(`no message ${input.message_ts} in ${ch.name}`);
        const responseUrl = ws.createResponseUrl({
          channel: ch.id,
          user: user.id,
          messageTs: m.ts,
        });
        const r = await sendPayload(
          {
            type: "message_action",
            ...base,
            message_ts: m.ts,
            message: ws.messageJson(m),
            channel: { id: ch.id, name: ch.name },
            response_url: responseUrl,
          },
          input,
        );
        return { ...r, triggerId, responseUrl };
      }
      const r = await sendPayload({ type: "shortcut", ...base }, input);
      return { ...r, triggerId };
    },

    async postMessage(input) {
      const user = userOf(input.user);
      const ch = channelOf(input.channel);
      if (!ch.members.has(user.id)) throw new DriverError(`${user.name} is not in ${ch.name}`);
      const msg = ws.postMessage(ch, user.id, { text: input.text }, { via: "driver" });
      const links = linksIn(input.text, input.unfurlDomains ?? []);
      if (links.length === 0) return { ts: msg.ts };
      const unfurlId = recordSharedLinks(
        ws,
        ch.id,
        msg.ts,
        links.map((l) => l.url),
      );
      const result = await driver.event(
        {
          type: "link_shared",
          channel: ch.id,
          is_bot_user_member: ch.members.has(ws.app.botUserId),
          user: user.id,
          message_ts: msg.ts,
          unfurl_id: unfurlId,
          source: "conversations_history",
          links,
        },
        input,
      );
      return { ts: msg.ts, unfurlId, result };
    },

    async event(event, o = {}) {
      const { team: teamOpt, ...eo } = o;
      const ev: Json = { ...event };
      if (event.type === "app_home_opened") {
        const user = userOf(String(event.user));
        ev.user = user.id;
        ev.channel ??= ws.dmWith(user.id).id;
        ev.tab ??= "home";
        const home = ws.homeView(user.id);
        if (home && ev.view === undefined && ev.tab === "home") ev.view = ws.viewJson(home);
      }
      ev.event_ts ??= actionTs();
      // The workspace the event happened in: the one asked for, else the person's own; an
      // org-level event (an org-wide uninstall) names the enterprise and no workspace.
      const actor = typeof ev.user === "string" ? ws.user(ev.user) : undefined;
      const where = teamOpt ?? (org ? (actor?.team_id ?? ws.team.id) : ws.team.id);
      const orgLevel = org !== undefined && where === org.id;
      const payload: Json = {
        token: ws.verificationToken,
        team_id: where,
        ...(ws.enterprise && { enterprise_id: ws.enterprise.id }),
        ...(!orgLevel && { context_team_id: where }),
        ...(ws.enterprise && { context_enterprise_id: ws.enterprise.id }),
        api_app_id: ws.app.appId,
        event: ev,
        type: "event_callback",
        event_id: `Ev${randomHex(5).toUpperCase()}`,
        event_time: Math.floor(now() / 1000),
        authorizations: [
          {
            enterprise_id: ws.enterprise?.id ?? null,
            team_id: org ? null : ws.team.id,
            user_id: ws.app.botUserId,
            is_bot: true,
            is_enterprise_install: org !== undefined,
          },
        ],
        is_ext_shared_channel: false,
        event_context: `4-${randomHex(16)}`,
      };
      return deliverEvent(payload, eo);
    },

    async uninstall(o = {}) {
      // One workspace of an org-wide install: the org's tokens stay, that workspace is told.
      if (org && o.team !== undefined && o.team !== org.id) {
        return [await driver.event({ type: "app_uninstalled" }, { team: o.team })];
      }
      const revoked = ws.uninstall();
      const events = [
        { type: "app_uninstalled" },
        { type: "tokens_revoked", tokens: { oauth: revoked.oauth, bot: revoked.bot } },
      ];
      if (o.order === "tokens_revoked-first") events.reverse();
      const out: DriverResult[] = [];
      for (const e of events) out.push(await driver.event(e, org ? { team: org.id } : {}));
      return out;
    },

    async urlVerification(challenge = randomHex(16), o = {}) {
      return sendEvent({ token: ws.verificationToken, challenge, type: "url_verification" }, o);
    },

    async oauthInstall(o = {}) {
      const installRes = await fetch(`${appUrl}${o.installPath ?? "/slack/install"}`, {
        redirect: "manual",
        signal: AbortSignal.timeout(timeoutMs),
      });
      const cookies = installRes.headers
        .getSetCookie()
        .map((c) => c.split(";")[0])
        .join("; ");
      const install = { ...(await readResult(installRes)), payload: {} };
      let authorizeUrl = installRes.headers.get("location") ?? undefined;
      if (authorizeUrl === undefined && typeof install.body === "string") {
        const m = /href="([^"]*\/oauth\/v2\/authorize[^"]*)"/.exec(install.body);
        authorizeUrl = m?.[1]?.replaceAll("&amp;", "&");
      }
      if (authorizeUrl === undefined) {
        throw new DriverError(
          `the install page (HTTP ${install.status}) links to no authorize URL`,
        );
      }
      const auth = new URL(authorizeUrl, appUrl);
      if (`${auth.origin}${auth.pathname}` !== emulator.authorizeUrl) {
        throw new DriverError(
          `the app sends installers to ${auth.origin}${auth.pathname}, not the emulator's ${emulator.authorizeUrl}`,
        );
      }
      if (o.user !== undefined) auth.searchParams.set("user", userOf(o.user).id);
      if (o.deny) auth.searchParams.set("deny", "1");
      const authRes = await fetch(auth, {
        redirect: "manual",
        signal: AbortSignal.timeout(timeoutMs),
      });
      const callbackUrl = authRes.headers.get("location");
      await authRes.arrayBuffer();
      if (authRes.status !== 302 || callbackUrl === null) {
        throw new DriverError(`the emulator refused the authorization (HTTP ${authRes.status})`);
      }
      const cbRes = await fetch(callbackUrl, {
        redirect: "manual",
        headers: cookies === "" ? {} : { cookie: cookies },
        signal: AbortSignal.timeout(timeoutMs),
      });
      const callback = { ...(await readResult(cbRes)), payload: {} };
      return { install, authorizeUrl: auth.toString(), callbackUrl, callback };
    },

    deliveries,
    timeouts,

    async settled() {
      while (pending.size > 0) await Promise.all([...pending].map((p) => p.done));
    },

    cancelRedeliveries() {
      for (const p of pending) clearTimeout(p.timer);
      pending.clear();
    },

    async sslCheck() {
      // Unsigned, no timestamp: Slack checks the certificate of a request URL being saved.
      const fields = { ssl_check: "1", token: ws.verificationToken };
      const r = await post(
        {
          "content-type": "application/x-www-form-urlencoded",
          "user-agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
        },
        new URLSearchParams(fields).toString(),
      );
      return { ...r, payload: fields };
    },

    async send(rawBody, contentType, o = {}) {
      const r = await send(rawBody, contentType, o);
      let payload: Json = {};
      try {
        payload = contentType.includes("json")
          ? (JSON.parse(rawBody) as Json)
          : Object.fromEntries(new URLSearchParams(rawBody).entries());
      } catch {
        payload = {};
      }
      return { ...r, payload };
    },
  };
  return driver;
}
