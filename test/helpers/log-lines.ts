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

/**
 * The lines of a harness's log (`h.logs`, raw chunks of JSON lines) that include every one of
 * `texts`, parsed: a test reads a line's own `time` and fields, not when it happened to look.
 */
export function loggedLines<T extends { time: number }>(
  logs: readonly string[],
  ...texts: string[]
): T[] {
  return logs
    .join("")
    .split("\n")
    .filter((l) => l.trim() !== "" && texts.every((t) => l.includes(t)))
    .map((l) => JSON.parse(l) as T);
}
