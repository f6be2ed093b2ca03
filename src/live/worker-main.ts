import { parentPort, workerData } from "node:worker_threads";
import { WebClient } from "@slack/web-api";
import type { LogLevel } from "../config.ts";
import { createLogger } from "../log.ts";
import { NoInstallationError, SLACK_CALL_TIMEOUT_MS } from "../slack-errors.ts";
import { createCipher, openStore } from "../store/index.ts";
import { type EngineDeps, LiveEngine } from "./engine.ts";
import { LIVE_REPOSITORIES } from "./live-record.ts";
import { NudgeGate } from "./nudge-gate.ts";
import { engineSnapshot } from "./report-post.ts";
import type { FromWorker, MetricName, ToWorker, WorkerInit } from "./worker-protocol.ts";
import { WorkerTokens } from "./worker-tokens.ts";

/**
 * The live engine's worker thread: its own store connection, its own Slack clients, the engine,
 * and messages to and from the main thread (worker-protocol.ts). Draining the outbox and posting
 * never run on the event loop that answers webhooks and Slack.
 */

const port = parentPort;
if (!port) throw new Error("worker-main.ts runs only as a worker thread");
const init = workerData as WorkerInit;
const send = (m: FromWorker) => port.postMessage(m);

const logger = createLogger({
  level: init.logLevel as LogLevel,
  // Lines go to the main thread, which writes them where the app's own go.
  destination: { write: (line: string) => send({ t: "log", line }) },
}).child({ component: "live" });

const metric = (name: MetricName) => ({
  inc: (labels: Record<string, string>) => send({ t: "metric", name, labels }),
  set: (labels: Record<string, string>, value: number) =>
    send({ t: "metric", name, labels, value }),
});

let nextId = 1;
const tokenWaits = new Map<
  number,
  { team: string; resolve(t: string): void; reject(e: Error): void }
>();
/** Installed tokens come from the main thread (which refreshes rotating ones), per workspace. */
function askToken(team: string, givenUp: AbortSignal): Promise<string> {
  const id = nextId++;
  // An answer no longer awaited (WorkerTokens gave up on it) is not kept waiting for.
  givenUp.addEventListener("abort", () => tokenWaits.delete(id), { once: true });
  return new Promise((resolve, reject) => {
    tokenWaits.set(id, { team, resolve, reject });
    send({ t: "token", id, team });
  });
}
/** Reused for a moment (worker-tokens.ts): no round trip to the main thread per post. */
const tokens = new WorkerTokens(askToken);

const clients = new Map<string, WebClient>();
const closers: Array<() => Promise<void> | void> = [];

const store = await openStore(init.storeUrl, {
  cipher: createCipher(
    Buffer.from(init.key),
    init.previousKeys.map((k) => Buffer.from(k)),
  ),
  repositories: LIVE_REPOSITORIES,
  logger,
  // The main thread sweeps expired entries; one sweeper per store is enough.
  sweepIntervalMs: 0,
  ...(init.storeNamespace ? { namespace: init.storeNamespace } : {}),
});

const gate = new NudgeGate(init.wantsNudge);
const deps: EngineDeps = {
  store,
  logger,
  reading: () => gate.reading(),
  metrics: {
    slackCalls: metric("slackCalls") as unknown as EngineDeps["metrics"]["slackCalls"],
    queueDepth: metric("queueDepth") as unknown as EngineDeps["metrics"]["queueDepth"],
  },
  now: Date.now,
  async bulkClient(team) {
    const token = await tokens.token(team);
    const cached = clients.get(team);
    if (cached && cached.token === token) return cached;
    // Never retries and never queues behind a 429: the engine paces and retries itself.
    const client = new WebClient(token, {
      ...(init.slackApiUrl ? { slackApiUrl: init.slackApiUrl } : {}),
      rejectRateLimitedCalls: true,
      retryConfig: { retries: 0 },
      timeout: init.engine.slackCallTimeoutMs ?? SLACK_CALL_TIMEOUT_MS,
      logger: {
        debug: () => {},
        info: () => {},
        warn: (...m: unknown[]) => logger.warn(m.map(String).join(" ")),
        error: (...m: unknown[]) => logger.error(m.map(String).join(" ")),
        setLevel: () => {},
        getLevel: () => "warn" as never,
        setName: () => {},
      },
    });
    clients.set(team, client);
    return client;
  },
  onClose(fn) {
    closers.push(fn);
  },
};

const engine = new LiveEngine(deps, init.engine);

port.on("message", (m: ToWorker) => {
  switch (m.t) {
    case "nudge":
      engine.nudge();
      return;
    case "figures":
      engine.figures(m.team, m.eventId).then(
        (figures) => send({ t: "figures", id: m.id, figures }),
        (err: unknown) => {
          logger.warn({ err }, "live: figures not read");
          send({ t: "figures", id: m.id, figures: undefined });
        },
      );
      return;
    case "snapshot":
      engineSnapshot(engine, m.team, m.eventId).then(
        (snapshot) => send({ t: "snapshot", id: m.id, snapshot }),
        (err: unknown) => {
          logger.warn({ err }, "live: attendance not read");
          send({ t: "snapshot", id: m.id, snapshot: undefined });
        },
      );
      return;
    case "announce":
      void engine
        .announce(m.team, m.channel, m.text)
        .finally(() => send({ t: "announced", id: m.id }));
      return;
    case "token": {
      const wait = tokenWaits.get(m.id);
      tokenWaits.delete(m.id);
      if (!wait) return;
      if (m.token) wait.resolve(m.token);
      else if (m.missing) wait.reject(new NoInstallationError(wait.team));
      else wait.reject(new Error(m.error ?? "no Slack token"));
      return;
    }
    case "stop":
      void (async () => {
        await engine.stop();
        tokens.clear();
        for (const fn of closers.reverse()) await Promise.resolve(fn()).catch(() => undefined);
        await store.close().catch(() => undefined);
        send({ t: "stopped" });
      })();
      return;
  }
});

engine.start();
send({ t: "ready" });
