import type { Deps } from "../deps.ts";
import { LiveWorker, type LiveWorkerOptions } from "./worker.ts";

/** One worker per app instance, found by its Deps (several apps may share a test process). */
const workers = new WeakMap<Deps, LiveWorker>();

export function liveWorker(deps: Deps): LiveWorker | undefined {
  return workers.get(deps);
}

/**
 * Starts the outbox drainer for this app instance: it drains at once whatever an earlier run
 * acknowledged and did not post, then keeps up. Stopped on app close.
 */
export function startLiveWorker(deps: Deps, options: LiveWorkerOptions = {}): LiveWorker {
  const existing = workers.get(deps);
  if (existing) return existing;
  const worker = new LiveWorker(deps, options);
  workers.set(deps, worker);
  deps.onClose(() => worker.stop());
  worker.start();
  return worker;
}
