import { createHash, randomBytes, randomInt, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";

/** What a service handler answers; the dispatcher writes it and logs its status. */
export interface Reply {
  readonly status: number;
  /** Serialised as JSON when present; absent means an empty body. */
  readonly json?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  /** Why a request was refused, for the call log only (events errors carry no body). */
  readonly reason?: string;
}

/** One request to a sandboxed service, with the base path already removed. */
export interface ServiceCall {
  readonly method: string;
  /** The path after the service's base, e.g. `/api/auth/accesstokens`. */
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  readonly rawBody: Buffer;
}

export class BodyTooLargeError extends Error {
  override readonly name = "BodyTooLargeError";
}

/** Reads the whole body, refusing more than `limit` bytes (the socket is left to the caller). */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on("data", (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        reject(new BodyTooLargeError(`request body over ${limit} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (!failed) resolve(Buffer.concat(chunks));
    });
    req.on("error", (err) => {
      if (!failed) {
        failed = true;
        reject(err);
      }
    });
  });
}

export function writeReply(res: ServerResponse, reply: Reply): void {
  const headers: Record<string, string> = { ...reply.headers };
  if (reply.json === undefined) {
    headers["content-length"] = "0";
    res.writeHead(reply.status, headers).end();
    return;
  }
  const body = Buffer.from(JSON.stringify(reply.json));
  headers["content-type"] = "application/json";
  headers["content-length"] = String(body.length);
  res.writeHead(reply.status, headers).end(body);
}

/** Parses JSON; `undefined` means "not JSON" (JSON itself has no undefined). */
export function parseJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString("utf8")) as unknown;
  } catch {
    return undefined;
  }
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** First value of a header that may repeat. */
export function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Secrets are compared on equal-length digests so neither content nor length leaks by timing. */
export function secretEquals(given: string, expected: string): boolean {
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}

/** Tokens are indexed by digest, so a lookup never compares the secret itself byte by byte. */
export function tokenKey(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}

export function randomHex(bytes: number): string {
  return randomBytes(bytes).toString("hex");
}

export function randomDigits(length: number): string {
  let out = String(randomInt(1, 10));
  while (out.length < length) out += String(randomInt(0, 10));
  return out;
}

/** `application/json`, optionally with parameters such as charset. */
export function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false;
  const type = value.split(";", 1)[0]?.trim().toLowerCase();
  return type === "application/json";
}

/** True when an Accept header is absent or admits JSON. */
export function acceptsJson(value: string | undefined): boolean {
  if (value === undefined || value.trim() === "") return true;
  return value.split(",").some((part) => {
    const type = part.split(";", 1)[0]?.trim().toLowerCase();
    return type === "application/json" || type === "application/*" || type === "*/*";
  });
}
