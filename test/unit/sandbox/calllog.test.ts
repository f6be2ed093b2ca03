import { describe, expect, it } from "vitest";
import { redactBody } from "../../../src/log.ts";
import { CallLog, redactedRequestLine, redactQuery } from "../../../src/sandbox/calllog.ts";

describe("sandbox call log redaction", () => {
  it("redacts credential query values and keeps the rest", () => {
    const q = new URLSearchParams(
      "accesstoken=a1&meetingaccesstoken=m1&code=c1&roles=ROLE_READONLY&clientname=x&roles=ROLE_READWRITE",
    );
    expect(redactQuery(q)).toEqual({
      accesstoken: "[redacted]",
      meetingaccesstoken: "[redacted]",
      code: "[redacted]",
      roles: ["ROLE_READONLY", "ROLE_READWRITE"],
      clientname: "x",
    });
    const line = redactedRequestLine("POST", "/api/auth/accesstokens", q);
    expect(line).toBe(
      "POST /api/auth/accesstokens?accesstoken=[redacted]&meetingaccesstoken=[redacted]&code=[redacted]&roles=ROLE_READONLY&clientname=x&roles=ROLE_READWRITE",
    );
  });

  it("redacts secret keys at any depth, every webhook header value, and secrets inside text", () => {
    const body = {
      grant_type: "user_app",
      properties: { client_id: "k", client_secret: "s1", user_email: "a@example.com" },
      headers: { "X-Onair-Secret": "h1", "X-Plain": "h2" },
      description: "see Bearer abc.def and password=pw1",
      nested: [{ accessToken: "t1", password: "p1" }],
    };
    expect(redactBody(body)).toEqual({
      grant_type: "user_app",
      properties: { client_id: "k", client_secret: "[redacted]", user_email: "a@example.com" },
      headers: { "X-Onair-Secret": "[redacted]", "X-Plain": "[redacted]" },
      description: "see Bearer [redacted] and password=[redacted]",
      nested: [{ accessToken: "[redacted]", password: "[redacted]" }],
    });
  });

  it("keeps the newest entries within its capacity, numbering on", () => {
    const log = new CallLog(3);
    for (let i = 0; i < 5; i += 1) {
      log.add({ at: i, service: "relay", method: "GET", path: "/p", status: 200 });
    }
    expect(log.list().map((e) => e.seq)).toEqual([3, 4, 5]);
    log.clear();
    expect(log.list()).toEqual([]);
    expect(log.add({ at: 9, service: "events", method: "GET", path: "/", status: 401 }).seq).toBe(
      6,
    );
  });
});
