import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { EventsService } from "./events.ts";
import type { SavedEventsState } from "./events-records.ts";

/**
 * The sandbox's events kept in a file (the playground keeps it in data/, beside the store), so
 * a restart does not leave the app holding events the service has forgotten. Users and events
 * with their webhooks and present attendees are kept; tokens are not (the app re-grants after
 * a 401, as with the real service). Saves are debounced and atomic (write, then rename).
 */

const FORMAT = 1;

export interface SandboxPersistence {
  /** Something changed: save within the debounce window. */
  touch(): void;
  /** Saves now if anything is pending. */
  flush(): void;
}

export function persistSandbox(
  events: EventsService,
  file: string,
  opts: { debounceMs?: number; onError?: (err: unknown) => void } = {},
): SandboxPersistence {
  try {
    const saved = JSON.parse(readFileSync(file, "utf8")) as {
      format?: number;
      state?: SavedEventsState;
    };
    if (saved.format === FORMAT && saved.state) events.importState(saved.state);
  } catch (err) {
    // No file yet is the normal first start; a corrupt one starts fresh, and says so.
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") opts.onError?.(err);
  }
  return debouncedSave(() => {
    mkdirSync(dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    // The webhooks' secret headers are in it: readable by this user only.
    writeFileSync(tmp, JSON.stringify({ format: FORMAT, state: events.exportState() }), {
      mode: 0o600,
    });
    renameSync(tmp, file);
  }, opts);
}

/**
 * Runs `save` once within `debounceMs` of the first touch after a save; flush saves now if a
 * touch is pending. A failed save goes to onError (the next touch tries again).
 */
export function debouncedSave(
  save: () => void,
  opts: { debounceMs?: number; onError?: (err: unknown) => void } = {},
): SandboxPersistence & { stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  let pending = false;
  const run = () => {
    timer = undefined;
    if (!pending) return;
    pending = false;
    try {
      save();
    } catch (err) {
      opts.onError?.(err);
    }
  };
  return {
    touch() {
      pending = true;
      if (timer === undefined) {
        timer = setTimeout(run, opts.debounceMs ?? 300);
        timer.unref();
      }
    },
    flush() {
      if (timer !== undefined) clearTimeout(timer);
      run();
    },
    stop() {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    },
  };
}
