/** The app in a child process of its own (child.ts), wired to an in-process emulator and sandbox. */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

export interface ChildApp {
  readonly origin: string;
  readonly proc: ChildProcess;
  /** Everything the child wrote (its logs): the rows count its errors. */
  readonly output: string[];
  /** SIGTERM and wait. */
  stop(): Promise<void>;
}

export function childAppEnv(opts: {
  signingSecret: string;
  emulator: { botToken: string; apiUrl: string };
  sandbox: { relayBaseUrl: string; eventsBaseUrl: string };
  storeUrl: string;
  key: Buffer;
}): Record<string, string> {
  return {
    PORT: "0",
    SLACK_SIGNING_SECRET: opts.signingSecret,
    SLACK_BOT_TOKEN: opts.emulator.botToken,
    SLACK_API_URL: opts.emulator.apiUrl,
    STORE_URL: opts.storeUrl,
    ONAIR_ENCRYPTION_KEY: opts.key.toString("base64"),
    RELAY_BASE_URL: opts.sandbox.relayBaseUrl,
    EVENTS_BASE_URL: opts.sandbox.eventsBaseUrl,
    LOG_LEVEL: "warn",
  };
}

const CHILD = fileURLToPath(new URL("./child.ts", import.meta.url));
const DIST_MAIN = fileURLToPath(new URL("../../dist/main.js", import.meta.url));

/**
 * The app in a child process. `compiled` runs the production build (`node dist/main.js`, after
 * `npm run build`) instead of the sources through tsx.
 */
export async function spawnApp(
  env: Record<string, string>,
  opts: { compiled?: boolean } = {},
): Promise<ChildApp> {
  const args = opts.compiled ? ["--enable-source-maps", DIST_MAIN] : ["--import", "tsx", CHILD];
  const ready = opts.compiled ? /serving Slack on port (\d+)/ : /ONAIR_READY (\S+)/;
  const proc = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  const origin = await new Promise<string>((resolve, reject) => {
    // A cold start compiles the app twice (the main thread and the live engine's thread).
    const timer = setTimeout(
      () => reject(new Error(`child did not start: ${output.join("")}`)),
      40_000,
    );
    let buf = "";
    proc.stdout?.on("data", (d: Buffer) => {
      const s = String(d);
      output.push(s);
      buf += s;
      const m = ready.exec(buf);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(opts.compiled ? `http://127.0.0.1:${m[1]}` : m[1]);
      }
    });
    proc.stderr?.on("data", (d: Buffer) => output.push(String(d)));
    proc.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`child exited with ${code}: ${output.join("").slice(-2000)}`));
    });
  });
  return {
    origin,
    proc,
    output,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill("SIGTERM");
      await exited;
    },
  };
}
