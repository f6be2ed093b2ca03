import type { IncomingMessage, ServerResponse } from "node:http";
import { parse as parseQuery } from "node:querystring";
import type { Json } from "./model.ts";

/** The HTTP edge's plumbing: bodies read within a limit, Slack's ways of sending arguments. */

export class BodyTooLarge extends Error {}

export async function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return (await readBytes(req, limit)).toString("utf8");
}

export async function readBytes(req: IncomingMessage, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > limit) throw new BodyTooLarge();
    chunks.push(b);
  }
  return Buffer.concat(chunks);
}

/** The bytes of an upload: the body itself, or the one file part of a multipart body. */
export function uploadedBytes(body: Buffer, contentType: string | undefined): Buffer {
  const m = /multipart\/form-data;\s*boundary=("?)([^";]+)\1/i.exec(contentType ?? "");
  if (!m) return body;
  const text = body.toString("latin1");
  const start = text.indexOf("\r\n\r\n");
  const end = text.lastIndexOf(`\r\n--${m[2]}`);
  if (start < 0 || end <= start) return body;
  return Buffer.from(text.slice(start + 4, end), "latin1");
}

export function formToObject(text: string): Json {
  const parsed = parseQuery(text);
  const out: Json = {};
  for (const [k, v] of Object.entries(parsed)) out[k] = Array.isArray(v) ? v[v.length - 1] : v;
  return out;
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Json = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    ...(headers as Record<string, string>),
  });
  res.end(text);
}

export function basicAuth(header: string | undefined): { user: string; pass: string } | undefined {
  const m = /^Basic\s+(.+)$/i.exec(header ?? "");
  if (!m?.[1]) return undefined;
  const decoded = Buffer.from(m[1], "base64").toString("utf8");
  const i = decoded.indexOf(":");
  if (i < 0) return undefined;
  return {
    user: decodeURIComponent(decoded.slice(0, i)),
    pass: decodeURIComponent(decoded.slice(i + 1)),
  };
}

/**
 * A Web API call's arguments as Slack reads them (query, then a form or JSON body) and its
 * token (the Authorization header, or a form field, never a JSON body); `parseError` when the
 * body cannot be read as Slack would.
 */
export async function readApiRequest(
  req: IncomingMessage,
  url: URL,
  bodyLimit: number,
): Promise<{ raw: Json; token: string | undefined; parseError: string | undefined }> {
  const text = await readBody(req, bodyLimit);
  const contentType = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  let raw: Json = Object.fromEntries(url.searchParams.entries());
  let jsonBody = false;
  let parseError: string | undefined;
  if (text.length > 0) {
    if (contentType === "application/json") {
      jsonBody = true;
      try {
        const parsed: unknown = JSON.parse(text);
        if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
          parseError = "json_not_object";
        } else raw = { ...raw, ...(parsed as Json) };
      } catch {
        parseError = "invalid_json";
      }
    } else if (
      contentType === "application/x-www-form-urlencoded" ||
      contentType === "text/plain" ||
      contentType === undefined ||
      contentType === ""
    ) {
      raw = { ...raw, ...formToObject(text) };
    } else {
      parseError = "invalid_post_type";
    }
  }
  const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "")?.[1];
  // Slack reads a token from the header or a form field, never from a JSON body.
  const token = bearer ?? (jsonBody ? undefined : (raw.token as string | undefined));
  return { raw, token, parseError };
}
