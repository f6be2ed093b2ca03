import { existsSync } from "node:fs";
import { type Config, ConfigError, loadConfig } from "./config.ts";

/**
 * `npm start`. With Slack credentials: the app for a real workspace. Without: the playground
 * (the same app, the embedded sandbox, an emulated workspace and a page to use it from).
 */

// Slack's starter apps read a .env file in the working directory; so do we. Values already
// in the environment win.
if (existsSync(".env")) process.loadEnvFile(".env");

function fail(message: string): never {
  process.stderr.write(`onair: ${message}\n`);
  process.exit(1);
}

let config: Config;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) fail(`configuration error: ${err.message}`);
  throw err;
}

let close: () => Promise<void>;
try {
  // Loaded after the configuration is known good: a bad variable is reported at once.
  if (config.mode === "slack") {
    const { startApp } = await import("./app.ts");
    const app = await startApp({ config });
    close = () => app.close();
    const port = new URL(app.origin).port;
    process.stdout.write(
      `onair: serving Slack on port ${port}; point the app's request URLs at ${app.config.publicUrl}/slack/events\n`,
    );
  } else {
    const { startPlayground } = await import("./playground/runtime.ts");
    const pg = await startPlayground({ config });
    close = () => pg.close();
    const url =
      config.port === 0 || process.env.PUBLIC_URL
        ? pg.url
        : `${config.publicUrl.replace(/\/+$/, "")}/playground`;
    process.stdout.write(
      [
        "",
        "  On Air playground: the app, the upstream sandbox and an emulated Slack workspace.",
        `  open ${url}`,
        "",
        "",
      ].join("\n"),
    );
  }
} catch (err) {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "EADDRINUSE") fail(`PORT ${config.port} is already in use; set PORT to a free port`);
  throw err;
}

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  process.stdout.write(`onair: ${signal}, shutting down\n`);
  // A close that hangs must not keep the process from exiting.
  setTimeout(() => process.exit(1), 10_000).unref();
  try {
    await close();
    process.exit(0);
  } catch (err) {
    process.stderr.write(`onair: error while shutting down: ${(err as Error).message}\n`);
    process.exit(1);
  }
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
