import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import {
  createLogger,
  isSecretName,
  REDACTED,
  readableLines,
  redactBody,
  SECRET_FIELDS,
  scrub,
} from "../../src/log.ts";

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

  it("writes readable lines, not JSON, for a terminal, still redacted", () => {
    const out: string[] = [];
    const tty = new Writable({
      write(chunk, _enc, cb) {
        out.push(String(chunk));
        cb();
      },
    });
    const logger = createLogger({ level: "info", destination: readableLines(tty) });
    logger.info({ what: "/onair edit", password: "hunter2" }, "refused");
    // biome-ignore lint/suspicious/noControlCharactersInRegex: colour codes are what it strips
    const text = out.join("").replace(/\u001b\[[0-9;]*m/g, "");
    expect(text).toMatch(/INFO.*refused/);
    expect(text).toContain('what: "/onair edit"');
    expect(text).not.toContain("hunter2");
    expect(() => JSON.parse(text.split("\n")[0] ?? "")).toThrow();
  });

  it("keeps an error's code readable, while a code field stays redacted", () => {
    const { lines, logger } = capture();
    const err = Object.assign(new Error("connect failed"), { code: "ECONNREFUSED" });
    logger.error({ err, query: { code: "oauth-code-123" } }, "store down");
    const all = lines.join("");
    expect(all).toContain('"errorCode":"ECONNREFUSED"');
    expect(all).not.toContain("oauth-code-123");
  });

  it("scrub leaves ordinary text alone", () => {
    expect(scrub("event 42 moved to IN_EVENT")).toBe("event 42 moved to IN_EVENT");
    expect(scrub("Basic dXNlcjpwYXNz")).toBe("Basic [redacted]");
  });

  it("one list of secret names: the log's exact fields are secret names by the same rule", () => {
    for (const f of SECRET_FIELDS) expect(isSecretName(f), f).toBe(true);
    for (const name of ["X-Onair-Secret", "meetingAccessToken", "Cookie", "x-api-key", "code"])
      expect(isSecretName(name), name).toBe(true);
    for (const name of ["title", "eventId", "codeName", "keys", "headers"])
      expect(isSecretName(name), name).toBe(false);
  });

  it("redactBody: one walk for the upstream errors and the sandbox's call log", () => {
    const body = {
      title: "Town hall",
      headers: [{ "X-OnAir-Secret": "WH-1" }],
      properties: { refresh_token: "RT-1", note: "see Bearer abc.def" },
    };
    expect(redactBody(body)).toEqual({
      title: "Town hall",
      headers: [REDACTED],
      properties: { refresh_token: REDACTED, note: `see Bearer ${REDACTED}` },
    });
    // A body nested past 8 levels is cut off there, secret or not: it is never walked forever.
    let deep: unknown = { leaf: "plain" };
    for (let i = 0; i < 12; i++) deep = { next: deep };
    expect(JSON.stringify(redactBody(deep))).not.toContain("plain");
    expect(JSON.stringify(redactBody(deep))).toContain(REDACTED);
  });

  it("scrub asks the one list for named values in forms, queries and JSON text", () => {
    const form = scrub(
      "grant_type=refresh_token&refresh_token=RT-9&client_id=1.2&signing_secret=SS-1",
    );
    expect(form).toBe(
      `grant_type=refresh_token&refresh_token=${REDACTED}&client_id=1.2&signing_secret=${REDACTED}`,
    );
    const json = scrub('answer {"title":"Town hall","apiKey":"AK-1","nested":{"passcode":"PC-1"}}');
    expect(json).toBe(
      `answer {"title":"Town hall","apiKey":"${REDACTED}","nested":{"passcode":"${REDACTED}"}}`,
    );
  });
});
