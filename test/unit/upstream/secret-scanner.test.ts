import { describe, expect, it } from "vitest";
import { createSecretScanner } from "../../helpers/secrets.ts";

describe("secret scanner (test helper)", () => {
  it("finds a secret in a log line, a cause chain, or in encoded form", () => {
    const s = createSecretScanner();
    s.logger.info({ note: "has tok-abc-123 inside" }, "line");
    expect(s.findLeaks(["tok-abc-123"])).toEqual([{ where: "log", secret: "to…(11 chars)" }]);

    const inner = createSecretScanner();
    inner.addError("e", new Error("outer", { cause: new Error("inner pw-zz-9") }));
    expect(inner.findLeaks(["pw-zz-9"]).length).toBeGreaterThan(0);

    const enc = createSecretScanner();
    enc.add("url", `https://x/?q=${encodeURIComponent("a b&c=d")}`);
    enc.add("hdr", `Basic ${Buffer.from("user:pass-77").toString("base64")}`);
    expect(enc.findLeaks(["a b&c=d"]).map((l) => l.where)).toEqual(["url"]);
    expect(enc.findLeaks(["user:pass-77"]).map((l) => l.where)).toEqual(["hdr"]);
    expect(() => enc.assertNoSecrets(["user:pass-77"])).toThrow(/us…\(12 chars\) in hdr/);
    expect(() => enc.assertNoSecrets(["absent-secret"])).not.toThrow();
  });

  it("refuses secrets too short to scan for meaningfully", () => {
    expect(() => createSecretScanner().findLeaks(["abc"])).toThrow(/at least 4/);
  });
});
