import type { AttendanceFigures } from "../deps.ts";
import type { InstanceSnapshot } from "../domain/report.ts";
import type { LiveEngineOptions } from "./engine.ts";

/**
 * The messages between the app's main thread (the HTTP routes, Bolt) and the live engine's
 * worker thread (worker.ts starts it, worker-main.ts is its entry). Plain data only.
 */

export interface WorkerInit {
  storeUrl: string;
  storeNamespace: string | undefined;
  /** The store's encryption key (32 bytes). */
  key: Uint8Array;
  /** ONAIR_ENCRYPTION_KEY_PREVIOUS while rotating: values it opens are sealed again with `key`. */
  previousKeys: Uint8Array[];
  logLevel: string;
  /** Web API base for the thread's Slack clients; undefined = Slack's own. */
  slackApiUrl: string | undefined;
  engine: LiveEngineOptions;
  /** The NudgeGate's flag, shared by the route's thread and the engine's (see nudge-gate.ts). */
  wantsNudge: SharedArrayBuffer;
}

export type ToWorker =
  | { t: "nudge" }
  | { t: "figures" | "snapshot"; id: number; team: string; eventId: string }
  | { t: "announce"; id: number; team: string; channel: string; text: string }
  | { t: "token"; id: number; token?: string; missing?: boolean; error?: string }
  | { t: "stop" };

export type MetricName = "slackCalls" | "queueDepth";

export type FromWorker =
  | { t: "ready" }
  | { t: "log"; line: string }
  | { t: "metric"; name: MetricName; labels: Record<string, string>; value?: number }
  | { t: "figures"; id: number; figures: AttendanceFigures | undefined }
  | { t: "snapshot"; id: number; snapshot: InstanceSnapshot | undefined }
  | { t: "announced"; id: number }
  | { t: "token"; id: number; team: string }
  | { t: "stopped" };
