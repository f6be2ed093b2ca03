import { createHmac } from "node:crypto";
import type { Json } from "../workspace.ts";
import type { Delivery, DriverResult, SendOptions } from "./types.ts";

/**
 * The wire between Slack and the app: requests signed exactly as Slack signs them (v0,
 * HMAC-SHA256 over `v0:{timestamp}:{raw body}`) posted to the app's events path, Slack's
 * 3-second deadline, and the Events API's redeliveries (api.slack.com/apis/events-api, "Error
 * handling": x-slack-retry-num 1–3, x-slack-retry-reason http_timeout / http_error /
 * connection_failed).
 */

/** The header value Slack sends: `v0=` + hex HMAC-SHA256 of `v0:{ts}:{body}`. */
export function signSlackRequest(signingSecret: string, timestampSec: number, rawBody: string) {
  return `v0=${createHmac("sha256", signingSecret).update(`v0:${timestampSec}:${rawBody}`).digest("hex")}`;
}

export interface TransportOptions {
  readonly appUrl: string;
  readonly path: string;
  readonly signingSecret: string;
  readonly now: () => number;
  readonly timeoutMs: number;
  readonly deadlineMs: number;
  readonly schedule: readonly number[];
}

export type Transport = ReturnType<typeof createTransport>;

type Sent = Omit<DriverResult, "payload"> & { elapsedMs: number; late: boolean };

export function createTransport(opts: TransportOptions) {
  const { appUrl, path, now, timeoutMs, deadlineMs, schedule } = opts;
  const deliveries: Delivery[] = [];
  const timeouts: { kind: string; elapsedMs: number }[] = [];
  const pending = new Set<{ timer: NodeJS.Timeout | undefined; done: Promise<void> }>();

  async function send(rawBody: string, contentType: string, o: SendOptions = {}): Promise<Sent> {
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

  async function post(headers: Record<string, string>, body: string): Promise<Sent> {
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

  return {
    deliveries,
    timeouts,
    send,
    post,
    readResult,
    sendForm,
    sendPayload,
    sendEvent,
    deliverEvent,
    async settled() {
      while (pending.size > 0) await Promise.all([...pending].map((p) => p.done));
    },
    cancelRedeliveries() {
      for (const p of pending) clearTimeout(p.timer);
      pending.clear();
    },
  };
}
