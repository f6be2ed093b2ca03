import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, startHarness } from "../helpers/app-harness.ts";

/** `/metrics` behind METRICS_TOKEN: a bearer token, nothing without it. */

const TOKEN = "metrics-token-for-tests-0123456789";
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ env: { METRICS_TOKEN: TOKEN } });
});
afterAll(async () => {
  await h?.close();
});

describe("/metrics with METRICS_TOKEN", () => {
  it("answers 401 without the token or with another, and the figures with it", async () => {
    const url = `${h.app.origin}/metrics`;
    for (const authorization of [
      undefined,
      `Bearer ${TOKEN}x`,
      `Bearer ${TOKEN.slice(0, -1)}`,
      `Basic ${Buffer.from(`x:${TOKEN}`).toString("base64")}`,
      TOKEN,
    ]) {
      const res = await fetch(url, authorization ? { headers: { authorization } } : {});
      expect({ authorization, status: res.status }).toEqual({ authorization, status: 401 });
      const body = await res.text();
      expect(body).toMatch(/METRICS_TOKEN/);
      expect(body).not.toContain("onair_");
    }
    const ok = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toMatch(/onair_http_requests_total/);
    // The token itself never reaches the log.
    expect(h.logs.join("")).not.toContain(TOKEN);
  });
});
