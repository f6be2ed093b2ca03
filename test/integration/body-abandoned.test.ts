import { once } from "node:events";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { readCapped } from "../../src/http/body.ts";

/**
 * The body reader when the sender hangs up, over real HTTP: mid-body, and before the reader was
 * even called (the route was waiting on a lookup). Either way it settles with Node's
 * ECONNRESET, never waits forever.
 */

/** A server whose handler hands each request to `take`, and a client that sends half a body. */
async function halfSent(take: (req: IncomingMessage) => void): Promise<void> {
  const server = createServer((req) => take(req));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  const socket = connect(port, "127.0.0.1");
  await once(socket, "connect");
  // Expect: 100-continue: Node answers "100 Continue" as it hands the request to the handler,
  // so the client knows the handler has it before hanging up.
  socket.write(
    'POST /x HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\nexpect: 100-continue\r\n\r\n{"half":',
  );
  await once(socket, "data");
  socket.destroy();
  await new Promise((r) => setTimeout(r, 0));
  server.close();
  server.closeAllConnections();
}

describe("readCapped when the sender hangs up", () => {
  it("rejects with ECONNRESET when the connection closes mid-body", async () => {
    let read: Promise<unknown> | undefined;
    await halfSent((req) => {
      read = readCapped(req, 1024);
      read.catch(() => undefined);
    });
    await expect(read).rejects.toMatchObject({ code: "ECONNRESET" });
  });

  it("rejects at once when called after the connection has already closed", async () => {
    let read: Promise<unknown> | undefined;
    const closed = new Promise<void>((resolve) => {
      void halfSent(async (req) => {
        // As when the route waits on a subscription lookup while the sender hangs up.
        await new Promise((r) => req.once("close", r));
        expect(req.destroyed).toBe(true);
        read = readCapped(req, 1024);
        read.catch(() => undefined);
        resolve();
      });
    });
    await closed;
    await expect(read).rejects.toMatchObject({ code: "ECONNRESET" });
  });
});
