import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../../scripts/ports.ts";

const ephemeralLow = Number(
  readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").split(/\s+/)[0],
);

const held: Server[] = [];
afterEach(async () => {
  await Promise.all(held.splice(0).map((s) => new Promise((r) => s.close(r))));
});

function hold(port: number): Promise<void> {
  const server = createServer();
  held.push(server);
  return new Promise((resolve) => server.listen(port, "127.0.0.1", () => resolve()));
}

describe("the tests' free ports", () => {
  it("lie below the range outgoing connections draw from, and repeat nowhere in a process", async () => {
    const ports: number[] = [];
    for (let i = 0; i < 50; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(50);
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(20_000);
      expect(port).toBeLessThan(ephemeralLow);
    }
  });

  it("skip a port something already listens on", async () => {
    // The ports are handed out in turn; hold the next few, and the one given is past them.
    const first = await freePort();
    for (let p = first + 1; p <= first + 5; p++) await hold(p);
    const given = await freePort();
    expect(given > first + 5 || given < first).toBe(true);
    expect(given).not.toBe(first + 1);
  });
});
