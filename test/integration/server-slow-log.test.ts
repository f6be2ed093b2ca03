import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createAppServer } from "../../src/http/server.ts";
import { createLogger } from "../../src/log.ts";
import { createMetrics } from "../../src/metrics.ts";

/** The server's slow-request log names the route and path, never the query (OAuth's code). */

const lines: string[] = [];
const server = createAppServer({
  logger: createLogger({
    level: "debug",
    destination: new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    }),
  }),
  metrics: createMetrics({ defaultMetrics: false }),
  slowMs: 20,
  handlers: [
    async (_req, res) => {
      await new Promise((r) => setTimeout(r, 40));
      res.writeHead(204).end();
      return true;
    },
  ],
});
let origin = "";
beforeAll(async () => {
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.close();
});

it("a slow OAuth redirect is logged by its path, without the code in its query", async () => {
  const res = await fetch(`${origin}/slack/oauth_redirect?code=SECRET-OAUTH-CODE-123&state=st8`);
  expect(res.status).toBe(204);
  await expect.poll(() => lines.some((l) => l.includes("slow request"))).toBe(true);
  const line = lines.find((l) => l.includes("slow request")) ?? "";
  expect(line).toContain("/slack/oauth_redirect");
  expect(line).not.toContain("SECRET-OAUTH-CODE-123");
  expect(line).not.toContain("st8");
});
