import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";

describe("npm run sandbox (src/sandbox/main.ts)", () => {
  it("serves both services on PORT, prints where, and stops cleanly on SIGTERM", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/sandbox/main.ts"], {
      env: { ...process.env, PORT: "0", LOG_LEVEL: "silent" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.setEncoding("utf8");
    const origin = await new Promise<string>((resolve, reject) => {
      child.stdout.on("data", (chunk: string) => {
        out += chunk;
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.once("exit", (code) => reject(new Error(`exited ${code} before listening: ${out}`)));
    });
    try {
      expect(out).toContain(`${origin}/_sandbox/relay`);
      expect(out).toContain(`${origin}/_sandbox/events`);
      expect(out).not.toContain("sandbox-secret");
      const res = await fetch(`${origin}/_sandbox/relay/api/auth/accesstokens`, {
        method: "POST",
        headers: { authorization: `Basic ${Buffer.from("sandbox:sandbox").toString("base64")}` },
      });
      expect(res.status).toBe(200);
    } finally {
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      const [code] = await exited;
      expect(code).toBe(0);
    }
  });

  it("refuses a bad PORT with one line naming it", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/sandbox/main.ts"], {
      env: { ...process.env, PORT: "eighty" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let err = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (c: string) => {
      err += c;
    });
    const [code] = await once(child, "exit");
    expect(code).toBe(1);
    expect(err.trim()).toBe(
      'onair sandbox: PORT must be a port number from 0 to 65535 (got "eighty")',
    );
  });
});
