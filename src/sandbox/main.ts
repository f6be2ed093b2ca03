/**
 * `npm run sandbox`: both upstream services and the control API alone, on PORT (default 4000).
 * HOST (default 127.0.0.1) and LOG_LEVEL (default info; debug logs every call, redacted) apply.
 */
import { LOG_LEVELS, type LogLevel } from "../config.ts";
import { createLogger } from "../log.ts";
import { SANDBOX_SEEDS, startSandboxServer } from "./index.ts";

function fail(message: string): never {
  process.stderr.write(`onair sandbox: ${message}\n`);
  process.exit(1);
}

const rawPort = process.env.PORT?.trim() || "4000";
const port = /^\d+$/.test(rawPort) ? Number(rawPort) : Number.NaN;
if (!Number.isInteger(port) || port > 65_535) {
  fail(`PORT must be a port number from 0 to 65535 (got "${rawPort}")`);
}
const rawLevel = process.env.LOG_LEVEL?.trim() || "info";
if (!(LOG_LEVELS as readonly string[]).includes(rawLevel)) {
  fail(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")} (got "${rawLevel}")`);
}
const logger = createLogger({ level: rawLevel as LogLevel });
const host = process.env.HOST?.trim() || "127.0.0.1";

const starting = startSandboxServer({ port, host, logger }).catch((err: unknown) =>
  fail(`cannot listen on ${host}:${port}: ${err instanceof Error ? err.message : String(err)}`),
);

let stopping = false;
async function stop(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  // A signal while starting closes the server once it listens.
  const started = await starting;
  process.stdout.write(`onair sandbox: ${signal}, shutting down\n`);
  await started.close();
  process.exit(0);
}
// Handled before the listening line is written: whoever signals on reading it is heard.
process.on("SIGINT", () => void stop("SIGINT"));
process.on("SIGTERM", () => void stop("SIGTERM"));

const server = await starting;

process.stdout.write(
  [
    `onair sandbox listening on ${server.origin}`,
    // The seeded password and secret are documented, but still never printed: a log is a log.
    `  relay:   ${server.relayBaseUrl}  (Basic user ${SANDBOX_SEEDS.relay.username})`,
    `  events:  ${server.eventsBaseUrl}  (key ${SANDBOX_SEEDS.events.clientId}; users: any @example.com)`,
    `  control: ${server.origin}/_sandbox/control  (events/{id}/state, events/{id}/attendees, faults, log)`,
    "",
  ].join("\n"),
);
