import { argumentError, SlackApiError } from "../errors.ts";
import { parseTs } from "../ids.ts";
import type { Message } from "../workspace.ts";

/**
 * A call's arguments as Slack reads them: form fields are strings, JSON bodies carry typed
 * values, an empty string counts as given-but-empty (Slack answers the resolution error for it,
 * e.g. `channel_not_found`, where a missing argument is `invalid_arguments`).
 */
export class Args {
  constructor(readonly raw: Readonly<Record<string, unknown>>) {}

  /** the argument was sent at all (even empty) */
  given(name: string): boolean {
    const v = this.raw[name];
    return v !== undefined && v !== null;
  }

  has(name: string): boolean {
    const v = this.raw[name];
    return v !== undefined && v !== null && v !== "";
  }

  str(name: string): string | undefined {
    const v = this.raw[name];
    if (typeof v === "string") return v === "" ? undefined : v;
    if (typeof v === "number" || typeof v === "boolean") return String(v);
    return undefined;
  }

  /** A value that must resolve to something: empty or absent is `code` (the resolution error). */
  resolve(name: string, code: string): string {
    const v = this.str(name);
    if (v === undefined) throw new SlackApiError(code);
    return v;
  }

  num(name: string): number | undefined {
    const v = this.raw[name];
    if (v === undefined || v === null || v === "") return undefined;
    const n = typeof v === "number" ? v : Number(v);
    if (!Number.isFinite(n)) {
      throw argumentError("invalid_arguments", [`[ERROR] ${name} must be a number`]);
    }
    return n;
  }

  bool(name: string): boolean | undefined {
    const v = this.raw[name];
    if (v === undefined || v === null || v === "") return undefined;
    return v === true || v === "true" || v === "1" || v === 1;
  }

  /** A JSON argument: form bodies carry it as a string, JSON bodies as the value itself. */
  json(name: string, badFormat: string): unknown {
    const v = this.raw[name];
    if (v === undefined || v === null || v === "") return undefined;
    if (typeof v !== "string") return v;
    try {
      return JSON.parse(v);
    } catch {
      throw badFormat === "invalid_arguments"
        ? argumentError(badFormat, [`[ERROR] ${name} is not valid JSON`])
        : new SlackApiError(badFormat);
    }
  }

  list(name: string, badFormat: string): unknown[] | undefined {
    const v = this.json(name, badFormat);
    if (v === undefined) return undefined;
    if (!Array.isArray(v)) {
      throw badFormat === "invalid_arguments"
        ? argumentError(badFormat, [`[ERROR] ${name} must be an array`])
        : new SlackApiError(badFormat);
    }
    return v;
  }

  csv(name: string): string[] {
    const v = this.str(name);
    return v === undefined
      ? []
      : v
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean);
  }
}

/** Slack's cursor pagination: an opaque next_cursor, "" on the last page. */
export function page<T>(
  items: readonly T[],
  a: Args,
  opts: { defaultLimit?: number; maxLimit?: number } = {},
): { items: T[]; next: string } {
  const max = opts.maxLimit ?? 1000;
  const limit = Math.min(a.num("limit") || (opts.defaultLimit ?? 100), max);
  let offset = 0;
  const cursor = a.str("cursor");
  if (cursor !== undefined) {
    const m = /^offset:(\d+)$/.exec(Buffer.from(cursor, "base64").toString("utf8"));
    if (!m) throw new SlackApiError("invalid_cursor");
    offset = Number(m[1]);
  }
  const slice = items.slice(offset, offset + limit);
  const nextOffset = offset + slice.length;
  const next =
    nextOffset < items.length ? Buffer.from(`offset:${nextOffset}`).toString("base64") : "";
  return { items: slice, next };
}

/** A Slack ts argument ("1700000000", "1700000000.5", "1700000000.000100") in microseconds. */
function tsArg(a: Args, name: "oldest" | "latest"): number | undefined {
  const v = a.str(name);
  if (v === undefined) return undefined;
  const m = /^(\d{1,12})(?:\.(\d{0,6}))?$/.exec(v);
  if (!m) throw new SlackApiError(`invalid_ts_${name}`);
  return Number(m[1]) * 1_000_000 + Number((m[2] ?? "").padEnd(6, "0"));
}

/**
 * conversations.history / .replies time range: only messages strictly after `oldest` and
 * before `latest` (default: now); `inclusive` keeps the bounds themselves.
 */
export function timeRange(a: Args): (m: Message) => boolean {
  const oldest = tsArg(a, "oldest");
  const latest = tsArg(a, "latest");
  const inclusive = a.bool("inclusive") === true;
  return (m) => {
    const at = parseTs(m.ts) ?? 0;
    if (oldest !== undefined && (inclusive ? at < oldest : at <= oldest)) return false;
    if (latest !== undefined && (inclusive ? at > latest : at >= latest)) return false;
    return true;
  };
}
