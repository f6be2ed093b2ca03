import type { Json } from "./model.ts";

/**
 * Every call the emulator received, as tests read it: in order, arguments and answers with
 * secrets redacted, with listeners and a wait for the first call matching.
 */

export interface CallRecord {
  /** 1, 2, 3… in arrival order */
  readonly seq: number;
  /** Web API method, or "oauth.v2.authorize" / "response_url" for those endpoints */
  readonly method: string;
  /** the arguments, secrets redacted; JSON-string arguments (blocks, view) parsed */
  readonly args: Readonly<Json>;
  readonly ok: boolean;
  readonly error?: string;
  /** 200, or 429 when throttled, or the response_url status */
  readonly status: number;
  /** emulator clock, ms */
  readonly time: number;
  /** bot or user token, when one was sent and known */
  readonly tokenKind?: "bot" | "user";
  /** the response body (secrets redacted) */
  readonly response?: Readonly<Json>;
  /** arguments the method does not take (Slack ignores them; an app should not send them) */
  readonly unknown_arguments?: readonly string[];
  /**
   * what Slack let pass but a stricter reading would not: thread_ts_not_found (a reply to a ts
   * that names no message), text_over_40000_characters, not_emulated (a method Slack has and
   * the emulator does not)
   */
  readonly warnings?: readonly string[];
}

/** The one list of field names whose values the call log never shows, at any depth. */
export const SECRET_KEYS: ReadonlySet<string> = new Set([
  "token",
  "client_secret",
  "refresh_token",
  "code",
  "access_token",
  "signing_secret",
  "bot_access_token",
]);
const JSON_ARGS = new Set(["blocks", "attachments", "view", "metadata", "outputs"]);

export function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (typeof value !== "object" || value === null) return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = SECRET_KEYS.has(k) && v !== undefined && v !== null ? "[redacted]" : redact(v);
  }
  return out;
}

/** A call's arguments as recorded: JSON-string arguments parsed, secrets redacted. */
export function recordedArgs(raw: Json): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(raw)) {
    if (JSON_ARGS.has(k) && typeof v === "string") {
      try {
        out[k] = JSON.parse(v);
        continue;
      } catch {
        // keep the string: the call failed on it and the record should show why
      }
    }
    out[k] = v;
  }
  return redact(out) as Json;
}

export class CallLog {
  readonly calls: CallRecord[] = [];
  private readonly listeners = new Set<(c: CallRecord) => void>();
  private seq = 0;

  constructor(private readonly now: () => number) {}

  record(c: Omit<CallRecord, "seq" | "time">): CallRecord {
    const rec: CallRecord = { ...c, seq: ++this.seq, time: this.now() };
    this.calls.push(rec);
    for (const l of this.listeners) {
      try {
        l(rec);
      } catch {
        // a listener's failure is the listener's business; the emulator keeps answering
      }
    }
    return rec;
  }

  onCall(listener: (call: CallRecord) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  waitForCall(
    match: (call: CallRecord) => boolean,
    o: { since?: number; timeoutMs?: number } = {},
  ): Promise<CallRecord> {
    const since = o.since ?? 0;
    const found = this.calls.find((c) => c.seq > since && match(c));
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        off();
        reject(new Error(`no matching Slack call within ${o.timeoutMs ?? 5000} ms`));
      }, o.timeoutMs ?? 5000);
      const off = this.onCall((c) => {
        if (c.seq > since && match(c)) {
          clearTimeout(t);
          off();
          resolve(c);
        }
      });
    });
  }

  clear(): void {
    this.calls.length = 0;
  }

  close(): void {
    this.listeners.clear();
  }
}
