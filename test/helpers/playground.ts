import { join } from "node:path";
import { Writable } from "node:stream";
import { loadConfig } from "../../src/config.ts";
import {
  type Playground,
  type PlaygroundOptions,
  startPlayground,
} from "../../src/playground/runtime.ts";

/**
 * The playground as `npm start` runs it, for tests: its store and files in `dir`, every log line
 * kept in `logs` (scanned for secrets), ms-scale retries. Port 0 unless one is given (a test
 * that restarts it keeps one port, as the sandbox's webhooks name it); `org` for the org-wide
 * install with two workspaces.
 */
export function startTestPlayground(
  dir: string,
  logs: string[],
  port = 0,
  more: { org?: boolean; reconcile?: PlaygroundOptions["reconcile"] } = {},
): Promise<Playground> {
  return startPlayground({
    ...more,
    config: loadConfig({
      PORT: String(port),
      STORE_URL: `sqlite://${join(dir, "onair.sqlite")}`,
      LOG_LEVEL: "debug",
    }),
    dataDir: dir,
    host: "127.0.0.1",
    retryPolicy: "fast",
    logDestination: new Writable({
      write(chunk, _enc, cb) {
        logs.push(String(chunk));
        cb();
      },
    }),
  });
}
