import { isSecretName, REDACTED, scrub } from "../log.ts";

export type SandboxService = "relay" | "events";

/** One call a sandboxed service received, with every credential replaced by `[redacted]`. */
export interface CallLogEntry {
  readonly seq: number;
  /** Epoch ms on the sandbox's clock. */
  readonly at: number;
  readonly service: SandboxService;
  readonly method: string;
  /** The path after the service's base, exactly as in the spec. */
  readonly path: string;
  readonly query?: Record<string, string | string[]>;
  /** The parsed JSON request body, secrets redacted; absent when none was sent. */
  readonly body?: unknown;
  readonly status: number;
  /** `grant_type` of a token request to the events service. */
  readonly grantType?: string;
  /** Why the sandbox refused the call, when it did (the events service sends no error body). */
  readonly reason?: string;
}

export function redactQuery(query: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const key of new Set(query.keys())) {
    const values = query.getAll(key).map((v) => (isSecretName(key) ? REDACTED : scrub(v)));
    out[key] = values.length === 1 ? values[0]! : values;
  }
  return out;
}

/** A query string for echoing in an error message, credentials replaced. */
export function redactedRequestLine(method: string, path: string, query: URLSearchParams): string {
  const parts: string[] = [];
  for (const [key, value] of query) {
    parts.push(`${key}=${isSecretName(key) ? REDACTED : scrub(value)}`);
  }
  return `${method} ${path}${parts.length > 0 ? `?${parts.join("&")}` : ""}`;
}

/** Bounded: the oldest entries go first, so a long bench run cannot grow memory without end. */
export class CallLog {
  private entries: CallLogEntry[] = [];
  private seq = 0;

  constructor(private readonly capacity = 10_000) {}

  add(entry: Omit<CallLogEntry, "seq">): CallLogEntry {
    this.seq += 1;
    const full: CallLogEntry = { seq: this.seq, ...entry };
    this.entries.push(full);
    if (this.entries.length > this.capacity) {
      this.entries.splice(0, this.entries.length - this.capacity);
    }
    return full;
  }

  list(): CallLogEntry[] {
    return [...this.entries];
  }

  clear(): void {
    this.entries = [];
  }
}
