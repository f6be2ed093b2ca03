import { spawn, spawnSync } from "node:child_process";
import { type AddressInfo, connect, createServer as createNetServer } from "node:net";
import { subscribeChannel } from "../../src/domain/subscriptions.ts";
import { type Harness, TEAM, USERS } from "../helpers/app-harness.ts";
import { seedEvent } from "../helpers/live-fixtures.ts";

/** The whole fault suite under `npm run test:faults`; a bounded slice in the default `npm test`. */
export const FULL = process.env.ONAIR_FAULTS === "full";

/**
 * The Redis fault tests start a redis-server of their own. Where none is installed they are
 * skipped, except under ONAIR_REQUIRE_SERVICES=1 (CI), where its absence is a failure.
 */
export const NO_REDIS_SERVER =
  spawnSync("redis-server", ["--version"], { stdio: "ignore" }).status !== 0 &&
  process.env.ONAIR_REQUIRE_SERVICES !== "1";

/** A fixed seed by default so a failure replays; FAST_CHECK_SEED overrides it. */
export const SEED = Number(process.env.FAST_CHECK_SEED ?? 20261122);

/** A bounded slice of `items` (every k-th, always the first and last) unless FULL. */
export function slice<T>(items: readonly T[], bounded: number): T[] {
  if (FULL || items.length <= bounded) return [...items];
  const step = items.length / bounded;
  const picked = new Set<number>([0, items.length - 1]);
  for (let i = 0; picked.size < bounded; i++) picked.add(Math.floor(i * step));
  return [...picked].sort((a, b) => a - b).map((i) => items[i] as T);
}

/**
 * Subscribes a channel through the live area's own path and returns the webhook target the
 * events service was given. The store keeps only the secret's hash, so the test reads the
 * secret where the events service does: in the registerWebhook call.
 */
export async function subscribeForTest(
  h: Harness,
  title: string,
  channel: string,
): Promise<{ eventId: string; url: string; headers: Record<string, string> }> {
  const deps = h.app.deps;
  const event = await seedEvent(deps, { team: TEAM, organizer: USERS.omar, title });
  const events = deps.events as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
  const original = events.registerWebhook;
  if (!original) throw new Error("the events client has no registerWebhook");
  let target: { url: string; headers: Record<string, string> } | undefined;
  events.registerWebhook = (...args: unknown[]) => {
    const cfg = args[3] as { url: string; headers: Record<string, string> };
    target = { url: cfg.url, headers: { ...cfg.headers } };
    return original.apply(events, args);
  };
  try {
    await subscribeChannel(deps, { team: TEAM, eventId: event.eventId, channel, user: USERS.omar });
  } finally {
    events.registerWebhook = original;
  }
  if (!target) throw new Error("no webhook was registered");
  return { eventId: event.eventId, ...target };
}

/** A redis-server of the test's own on a free port (no persistence), and how to stop it. */
export async function startPrivateRedis(): Promise<{ url: string; stop(): Promise<void> }> {
  const probe = createNetServer();
  await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    { stdio: "ignore" },
  );
  for (let i = 0; i < 100; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const s = connect(port, "127.0.0.1", () => {
        s.end();
        resolve(true);
      });
      s.on("error", () => resolve(false));
    });
    if (up) break;
    if (i === 99) throw new Error("redis-server did not start");
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((r) => child.once("exit", r));
      child.kill("SIGKILL");
      await gone;
    },
  };
}
