import { Writable } from "node:stream";
import { createLogger, type Logger } from "../../src/log.ts";

/** A logger whose lines (parsed JSON) are collected in `lines`, for a test to look at. */
export function capturedLogs(level: Parameters<typeof createLogger>[0]["level"]): {
  logger: Logger;
  lines: Array<Record<string, unknown>>;
} {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({
    level,
    destination: new Writable({
      write(chunk, _e, cb) {
        for (const l of String(chunk).split("\n")) if (l.trim()) lines.push(JSON.parse(l));
        cb();
      },
    }),
  });
  return { logger, lines };
}
