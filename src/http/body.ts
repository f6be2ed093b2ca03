import type { IncomingMessage, ServerResponse } from "node:http";

/** Every JSON answer of the server. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/**
 * The one body reader: the whole body, or "too_large" as soon as it passes `limit` bytes (a
 * chunked body has no length to refuse early, so its bytes are counted as they come). After
 * "too_large" the request is left paused; answer it with `refuse`.
 */
export function readCapped(req: IncomingMessage, limit: number): Promise<Buffer | "too_large"> {
  return new Promise((resolve, reject) => {
    // Its sender hung up before this was called (while the route waited on a lookup): no data,
    // end or error event is coming, and the promise would wait forever.
    if (req.destroyed) {
      reject(req.errored ?? senderGone());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const onData = (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        done = true;
        chunks.length = 0;
        req.off("data", onData);
        req.pause();
        resolve("too_large");
        return;
      }
      chunks.push(chunk);
    };
    // on, not once: once wraps each listener in another closure, per request, and `done`
    // already makes each of these run at most once.
    req.on("data", onData);
    req.on("end", () => {
      if (done) return;
      done = true;
      resolve(size === chunks[0]?.length ? chunks[0] : Buffer.concat(chunks, size));
    });
    req.on("error", (err) => {
      if (done) return;
      done = true;
      reject(err);
    });
    // Closed before its end without an error event: as good as one.
    req.on("close", () => {
      if (done) return;
      done = true;
      reject(req.errored ?? senderGone());
    });
  });
}

/** The error Node gives a request whose connection closed under it (see server.ts). */
function senderGone(): Error {
  return Object.assign(new Error("aborted"), { code: "ECONNRESET" });
}

/**
 * Answers without reading the rest of the body. A small, fully declared body is drained so the
 * connection can be reused; a large or unknown-length one is not read: the answer goes out and
 * the connection closes, so the sender sees it while its upload stalls.
 */
export function refuse(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  error: string,
  opts: { limit: number; headers?: Record<string, string> },
): void {
  const headers = opts.headers ?? {};
  const length = Number(req.headers["content-length"]);
  const small = Number.isFinite(length) && length <= opts.limit;
  if (req.complete || small) {
    sendJson(res, status, { error }, headers);
    req.resume();
    return;
  }
  req.pause();
  sendJson(res, status, { error }, { ...headers, connection: "close" });
  res.once("finish", () => {
    req.socket.end();
    setTimeout(() => req.socket.destroy(), 2_000).unref();
  });
}
