import { startCommand } from "./cli.ts";
import { ConfigError } from "./config.ts";
import { createLogger, lifecycleLevel, scrub } from "./log.ts";

/**
 * `npm start`. With Slack credentials: the app for a real workspace. Without: the playground
 * (the same app, the embedded sandbox, an emulated workspace and a page to use it from).
 */

const { config, fail } = startCommand("onair");

// The last resort: a failure nothing else caught (a rejection inside a library's callback, a
// throw in a timer) is logged and the process keeps serving. Every request and listener has its
// own handling; this only keeps one stray failure from taking the whole app down.
const lastResort = createLogger({ level: config.logLevel }).child({ component: "process" });
// "Serving", "shutting down": log lines like every other, written at any level but silent, so
// whoever watches the output (a supervisor, a test) sees the app come up and go down.
const lifecycle = createLogger({ level: lifecycleLevel(config.logLevel) }).child({
  component: "process",
});
process.on("unhandledRejection", (reason) => {
  lastResort.error({ err: reason }, "unhandled rejection; still serving");
});
process.on("uncaughtException", (err) => {
  lastResort.error({ err }, "uncaught exception; still serving");
});

// The compiled build (npm run build, node dist/main.js) serves Slack only: the playground's
// emulated workspace is a development dependency, left out of a production install.
const compiled = import.meta.url.endsWith(".js");
if (compiled && config.mode === "playground") {
  fail(
    "no Slack credentials: set SLACK_BOT_TOKEN (one workspace) or SLACK_CLIENT_ID, SLACK_CLIENT_SECRET and SLACK_STATE_SECRET (OAuth). The playground runs from a source checkout with npm start.",
  );
}

let close: (() => Promise<void>) | undefined;
/** The signal that asked the app to stop, if one has. */
let asked: string | undefined;
let stopping = false;
async function shutdown(signal: string) {
  asked = signal;
  // Still starting: stopped as soon as there is something to close (below).
  if (!close || stopping) return;
  stopping = true;
  lifecycle.info({ signal }, `${signal}, shutting down`);
  // A close that hangs must not keep the process from exiting.
  setTimeout(() => process.exit(1), 10_000).unref();
  try {
    await close();
    process.exit(0);
  } catch (err) {
    lifecycle.error({ err }, "error while shutting down");
    process.exit(1);
  }
}
// Handled before the app says it is up: whoever reads that line and signals at once is heard,
// never met by the default action (ended by the signal, no clean close).
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));

try {
  // Loaded after the configuration is known good: a bad variable is reported at once.
  if (config.mode === "slack") {
    const { startApp } = await import("./app.ts");
    const app = await startApp({ config });
    close = () => app.close();
    const port = new URL(app.origin).port;
    lifecycle.info(
      { port: Number(port), requestUrl: `${app.config.publicUrl}/slack/events` },
      `serving Slack on port ${port}; point the app's request URLs at ${app.config.publicUrl}/slack/events`,
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
  // The operator's to fix, and the line says how: no stack.
  if ((err as Error).name === "EncryptionKeyError") fail((err as Error).message);
  // A variable the environment got wrong, found only by trying it (a token Slack refuses, Slack
  // out of reach, a data directory the process cannot write): the line names it.
  if (err instanceof ConfigError) fail(`could not start: ${scrub(err.message)}`);
  // Nothing serves yet, so there is nothing to keep running: say why and stop.
  lastResort.fatal({ err }, "could not start");
  fail(`could not start: ${scrub(String((err as Error)?.message ?? err))}`);
}

// A signal while starting stops the app once it has started.
if (asked) void shutdown(asked);
