import type { Worker } from "node:worker_threads";
import type { AttendanceFigures, Deps, LivePort } from "../deps.ts";
import type { InstanceSnapshot } from "../domain/report.ts";
import type { Metrics } from "../metrics.ts";
import { NoInstallationError } from "../slack-errors.ts";
import { type LiveEngineOptions, startLiveEngine } from "./engine.ts";
import { Ingest } from "./ingest.ts";
import { NudgeGate } from "./nudge-gate.ts";
import { engineSnapshot } from "./report-post.ts";
import { spawnLiveWorker } from "./worker.ts";
import type { FromWorker, ToWorker, WorkerInit } from "./worker-protocol.ts";

/**
 * The live engine as the rest of the app holds it: the webhook route's ingest (always on the main
 * thread: it answers the request) and the engine, either in a worker thread of its own (the
 * default on a store other threads can open: SQLite, Redis, Postgres) or inline (the memory store,
 * which only this thread can see).
 */
export interface LiveHost extends LivePort {
  /** What the webhook route calls. */
  readonly ingest: Ingest;
  readonly where: "thread" | "inline";
  /** Stops the engine (its current Slack calls finish and are recorded). */
  stop(): Promise<void>;
}

export interface LiveHostOptions {
  /** Run the engine in a worker thread with this set-up; false: inline. */
  thread: Omit<WorkerInit, "engine" | "wantsNudge"> | false;
  engine?: LiveEngineOptions;
}

/** How long to wait before starting a worker thread again after it died. */
const RESTART_MS = 1_000;
const STOP_MS = 5_000;

export async function startLiveHost(deps: Deps, opts: LiveHostOptions): Promise<LiveHost> {
  if (!opts.thread) return inline(deps, opts.engine ?? {});
  return threaded(deps, {
    ...opts.thread,
    engine: opts.engine ?? {},
    wantsNudge: NudgeGate.raisedFlag(),
  });
}

function inline(deps: Deps, options: LiveEngineOptions): LiveHost {
  const gate = new NudgeGate();
  const engine = startLiveEngine({ ...deps, reading: () => gate.reading() }, options);
  const ingest = new Ingest(deps, () => {
    if (gate.stored()) engine.nudge();
  });
  return {
    ingest,
    where: "inline",
    nudge: () => engine.nudge(),
    forgetSubscription: (id) => ingest.forget(id),
    figures: (team, eventId) => engine.figures(team, eventId),
    snapshot: (team, eventId) => engineSnapshot(engine, team, eventId),
    announce: (team, channel, text) => engine.announce(team, channel, text),
    stop: () => engine.stop(),
  };
}

async function threaded(deps: Deps, init: WorkerInit): Promise<LiveHost> {
  const log = deps.logger.child({ component: "live-thread" });
  let worker: Worker | undefined;
  let stopping = false;
  let nextId = 1;
  const figuresWaits = new Map<number, (f: AttendanceFigures | undefined) => void>();
  const snapshotWaits = new Map<number, (s: InstanceSnapshot | undefined) => void>();
  const announceWaits = new Map<number, () => void>();
  let stopped: (() => void) | undefined;

  const post = (m: ToWorker) => worker?.postMessage(m);
  // Shared with the thread: only the first message stored after each outbox read nudges it.
  const gate = new NudgeGate(init.wantsNudge);

  const onMessage = (m: FromWorker) => {
    switch (m.t) {
      case "log":
        relayLog(deps, m.line);
        return;
      case "metric":
        countMetric(deps.metrics, m);
        return;
      case "figures":
        figuresWaits.get(m.id)?.(m.figures);
        figuresWaits.delete(m.id);
        return;
      case "snapshot":
        snapshotWaits.get(m.id)?.(m.snapshot);
        snapshotWaits.delete(m.id);
        return;
      case "announced":
        announceWaits.get(m.id)?.();
        announceWaits.delete(m.id);
        return;
      case "token":
        deps.bulkClient(m.team).then(
          (c) => post({ t: "token", id: m.id, ...(c.token ? { token: c.token } : {}) }),
          (err: unknown) =>
            post({
              t: "token",
              id: m.id,
              ...(err instanceof NoInstallationError
                ? { missing: true }
                : { error: (err as Error).message }),
            }),
        );
        return;
      case "stopped":
        stopped?.();
        return;
      case "ready":
        return;
    }
  };

  const start = async (): Promise<void> => {
    // A new thread reads the outbox first thing; until then, the first store nudges it.
    gate.reading();
    const w = await spawnLiveWorker(init, onMessage);
    worker = w;
    w.on("error", (err) => log.error({ err }, "live: the engine's thread failed"));
    w.on("exit", (code) => {
      if (worker === w) worker = undefined;
      // Answers nobody will send now: those waiting get "nothing" rather than hang.
      for (const done of figuresWaits.values()) done(undefined);
      figuresWaits.clear();
      for (const done of snapshotWaits.values()) done(undefined);
      snapshotWaits.clear();
      for (const done of announceWaits.values()) done();
      announceWaits.clear();
      if (stopping) return;
      // Nothing acknowledged is lost (the outbox is in the store): start again, a bit later.
      log.error({ code }, "live: the engine's thread stopped; starting it again");
      setTimeout(() => {
        if (!stopping) start().catch((err: unknown) => log.error({ err }, "live: restart failed"));
      }, RESTART_MS).unref();
    });
  };
  await start();

  const ingest = new Ingest(deps, () => {
    if (gate.stored()) post({ t: "nudge" });
  });
  return {
    ingest,
    where: "thread",
    nudge: () => post({ t: "nudge" }),
    forgetSubscription: (id) => ingest.forget(id),
    figures: (team, eventId) =>
      new Promise((resolve) => {
        if (!worker) return resolve(undefined);
        const id = nextId++;
        figuresWaits.set(id, resolve);
        post({ t: "figures", id, team, eventId });
      }),
    snapshot: (team, eventId) =>
      new Promise((resolve) => {
        if (!worker) return resolve(undefined);
        const id = nextId++;
        snapshotWaits.set(id, resolve);
        post({ t: "snapshot", id, team, eventId });
      }),
    announce: (team, channel, text) =>
      new Promise((resolve) => {
        if (!worker) return resolve();
        const id = nextId++;
        announceWaits.set(id, resolve);
        post({ t: "announce", id, team, channel, text });
      }),
    async stop() {
      if (stopping) return;
      stopping = true;
      const w = worker;
      if (!w) return;
      await Promise.race([
        new Promise<void>((resolve) => {
          stopped = resolve;
          post({ t: "stop" });
        }),
        new Promise<void>((resolve) => setTimeout(resolve, STOP_MS).unref()),
      ]);
      await w.terminate();
    },
  };
}

/** A line the thread's logger wrote, logged again by the app's own (same destination, redaction). */
function relayLog(deps: Deps, line: string): void {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return;
  }
  const { level, msg, time: _time, app: _app, ...rest } = o;
  const at = typeof level === "string" ? level : "info";
  const log = deps.logger as unknown as Record<string, (o: object, m?: string) => void>;
  (log[at] ?? log.info)?.call(deps.logger, rest, typeof msg === "string" ? msg : undefined);
}

function countMetric(metrics: Metrics, m: Extract<FromWorker, { t: "metric" }>): void {
  if (m.name === "slackCalls") metrics.slackCalls.inc(m.labels as never);
  else if (m.value !== undefined) metrics.queueDepth.set(m.labels as never, m.value);
}
