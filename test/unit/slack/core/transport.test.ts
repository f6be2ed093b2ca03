import { describe, expect, it } from "vitest";
import { boltLogger, scrubBolt } from "../../../../src/slack/bolt-logger.ts";
import { singleFlightAuthorize } from "../../../../src/slack/installation-store.ts";
import { createSecretScanner } from "../../../helpers/secrets.ts";

describe("scrubBolt", () => {
  it("hides secrets in the JSON and form bodies the Web API client logs at debug", () => {
    const json =
      'http request body: {"code":"0.abc","client_id":"1.2","client_secret":"shh-123","grant_type":"refresh_token","refresh_token":"xoxe-1-abc"}';
    const out = scrubBolt(json);
    for (const s of ["0.abc", "shh-123", "xoxe-1-abc"]) expect(out).not.toContain(s);
    expect(out).toContain('"client_id":"1.2"');
    const form = scrubBolt("body code=0.abc&client_secret=shh-123&state=st4te&client_id=1.2");
    for (const s of ["0.abc", "shh-123", "st4te"]) expect(form).not.toContain(s);
    expect(form).toContain("client_id=1.2");
    expect(scrubBolt("Authorization: Bearer xoxb-1-2-3")).not.toContain("xoxb-1-2-3");
  });
});

describe("boltLogger", () => {
  it("leaves out the Web API client's body dumps, which can echo what a person typed", () => {
    const scan = createSecretScanner();
    const log = boltLogger(scan.logger);
    log.debug(
      'http request result: {"ok":true,"view":{"state":{"values":{"pw":{"pw":{"value":"typed-pass-1"}}}}}}',
    );
    log.debug('http request body: {"view":"{\\"x\\":\\"typed-pass-1\\"}"}');
    log.debug("http request url: https://slack.com/api/views.update");
    expect(scan.findLeaks(["typed-pass-1"])).toEqual([]);
    const text = scan.texts.map((t) => t.text).join("\n");
    expect(text).toContain("http request result: [omitted]");
    expect(text).toContain("http request url: https://slack.com/api/views.update");
  });
});

describe("singleFlightAuthorize", () => {
  it("shares one call among concurrent requests of a workspace, and only while it runs", async () => {
    const calls: string[] = [];
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const authorize = singleFlightAuthorize(async (q) => {
      calls.push(String(q.teamId));
      await gate;
      return { botToken: `token-${q.teamId}` };
    });
    const q = (teamId: string) => ({ teamId, enterpriseId: undefined, isEnterpriseInstall: false });
    const burst = Promise.all([authorize(q("T1")), authorize(q("T1")), authorize(q("T2"))]);
    release();
    expect((await burst).map((r) => r.botToken)).toEqual(["token-T1", "token-T1", "token-T2"]);
    expect(calls).toEqual(["T1", "T2"]);
    await authorize(q("T1"));
    expect(calls).toEqual(["T1", "T2", "T1"]);
  });

  it("lets a failure reach every waiter and the next call try again", async () => {
    let n = 0;
    const authorize = singleFlightAuthorize(async () => {
      n++;
      if (n === 1) throw new Error("store down");
      return { ok: true };
    });
    const q = { teamId: "T1", enterpriseId: undefined, isEnterpriseInstall: false };
    const both = await Promise.allSettled([authorize(q), authorize(q)]);
    expect(both.map((b) => b.status)).toEqual(["rejected", "rejected"]);
    await expect(authorize(q)).resolves.toEqual({ ok: true });
    expect(n).toBe(2);
  });
});
