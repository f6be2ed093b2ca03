import type { App } from "@slack/bolt";
import type { ListenerKit } from "../kit.ts";
import * as getEventAttendance from "./get-event-attendance.ts";
import { SWEEP_EVERY_MS, sweepSteps } from "./run.ts";
import * as scheduleLiveEvent from "./schedule-live-event.ts";

/**
 * Workflow Builder's custom steps (the manifest's `functions`), one listener per step, and the
 * sweep that completes runs a stopped process left pending (run.ts).
 */
export function registerFunctions(app: App, kit: ListenerKit): void {
  for (const step of [scheduleLiveEvent, getEventAttendance]) step.register(app, kit);
  const { deps } = kit;
  let running: Promise<void> | undefined;
  const sweep = () => {
    running ??= sweepSteps(deps)
      .catch((err: unknown) => deps.logger.warn({ err }, "Workflow steps: the sweep failed"))
      .finally(() => {
        running = undefined;
      });
  };
  // Soon after start (a run a stopped process left), then now and then (Slack's trouble).
  const first = setTimeout(sweep, 1_000);
  const every = setInterval(sweep, SWEEP_EVERY_MS);
  first.unref();
  every.unref();
  deps.onClose(async () => {
    clearTimeout(first);
    clearInterval(every);
    await running;
  });
}
