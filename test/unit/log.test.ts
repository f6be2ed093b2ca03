import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger, scrub } from "../../src/log.ts";

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { lines, logger: createLogger({ level: "trace", destination }) };
}

describe("logger", () => {
  it("redacts secret fields at any depth", () => {
    const { lines, logger } = capture();
    logger.info(
      { token: "xoxb-aaa", deps: { password: "hunter2", inner: { client_secret: "cs-123" } } },
      "hello",
    );
    const all = lines.join("");
    expect(all).toContain("hello");
    for (const s of ["xoxb-aaa", "hunter2", "cs-123"]) expect(all).not.toContain(s);
  });

  it("scrubs secrets inside messages and errors", () => {
    const { lines, logger } = capture();
    logger.warn("calling https://x/api?accesstoken=abc123&roles=r with Bearer eyJhbGciOi.x.y");
    logger.error({ err: new Error("failed for xoxp-1-2-3 password=pw9") }, "boom");
    const all = lines.join("");
    for (const s of ["abc123", "eyJhbGciOi", "xoxp-1-2-3", "pw9"]) expect(all).not.toContain(s);
    expect(all).toContain("roles=r");
  });

  it("scrub leaves ordinary text alone", () => {
    expect(scrub("event 42 moved to IN_EVENT")).toBe("event 42 moved to IN_EVENT");
    expect(scrub("Basic dXNlcjpwYXNz")).toBe("Basic [redacted]");
  });
});
