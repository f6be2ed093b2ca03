import { describe, expect, it } from "vitest";
import { startHarness } from "../helpers/app-harness.ts";

describe("PUBLIC_URL with PORT=0", () => {
  it("names the port actually bound when none is given", async () => {
    const h = await startHarness();
    try {
      expect(h.app.deps.config.publicUrl).toBe(h.app.origin);
      expect(h.app.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(h.app.origin).not.toMatch(/:0$/);
    } finally {
      await h.close();
    }
  });

  it("keeps the one given, since webhooks must reach the app through it", async () => {
    const h = await startHarness({ env: { PUBLIC_URL: "https://onair.example.com" } });
    try {
      expect(h.app.deps.config.publicUrl).toBe("https://onair.example.com");
    } finally {
      await h.close();
    }
  });
});
