import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { CallRecord } from "@onair/slack-emulator";
import { freePort } from "../../scripts/ports.ts";
import type { Deps } from "../../src/deps.ts";
import { SANDBOX_SEEDS } from "../../src/sandbox/index.ts";
import { DEFAULT_SETTINGS, type Store } from "../../src/store/index.ts";

/** Test fixtures of the live area: an event scheduled upstream and known to the app. */

export interface SeededEvent {
  eventId: string;
  title: string;
}

const EMAILS: Record<string, string> = {
  U0ADA0ADMIN: "ada@example.com",
  U0OMAR0ORG: "omar@example.com",
  U0KEI0ORG: "kei@example.com",
  U0MIA0MEMBER: "mia@example.com",
};

/** Links the organizer, creates the event upstream and records it as the schedule flow would. */
export async function seedEvent(
  deps: Deps,
  opts: {
    team: string;
    organizer: string;
    title: string;
    startInMs?: number;
    panelists?: string[];
    moderators?: string[];
    credentials?: { clientId: string; clientSecret: string };
  },
): Promise<SeededEvent> {
  const email = EMAILS[opts.organizer];
  if (!email) throw new Error(`no e-mail for ${opts.organizer}`);
  const creds = opts.credentials ?? SANDBOX_SEEDS.events;
  const t = await deps.tokens.userToken(opts.team, email, creds);
  await deps.store.users.put(opts.team, opts.organizer, {
    email,
    userId: t.userId,
    enterpriseId: t.enterpriseId,
  });
  const start = Date.now() + (opts.startInMs ?? 3 * 3600_000);
  const { id } = await deps.events.createEvent(t.accessToken, t.userId, {
    title: opts.title,
    start,
    end: start + 3600_000,
    timezone: "UTC",
    panelists: (opts.panelists ?? []).map((e) => ({ email: e })),
    moderators: (opts.moderators ?? []).map((e) => ({ email: e })),
  });
  await deps.store.events.put({
    team: opts.team,
    eventId: id,
    organizer: opts.organizer,
    upstreamUserId: t.userId,
    title: opts.title,
    subscriptions: [],
    cards: {},
    instances: {},
    createdAt: Date.now(),
  });
  return { eventId: id, title: opts.title };
}

/** Polls until `check` returns a value (not undefined), or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => T | undefined | Promise<T | undefined>,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > until) {
      throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Sums the "N joined" / "N left" of digest texts. */
export function digestTotals(texts: readonly string[]): { joined: number; left: number } {
  let joined = 0;
  let left = 0;
  for (const t of texts) {
    joined += Number(/\*(\d+) joined\*/.exec(t)?.[1] ?? 0);
    left += Number(/\*(\d+) left\*/.exec(t)?.[1] ?? 0);
  }
  return { joined, left };
}

export function cardText(call: CallRecord | { args: Record<string, unknown> }): string {
  return JSON.stringify(call.args.blocks ?? "") + String(call.args.text ?? "");
}

// ---------------------------------------------------------------------------------------------
// The app in child processes (kill -9, two instances on one store)

export interface ChildApp {
  readonly origin: string;
  readonly proc: ChildProcess;
  /** Everything the child wrote (its logs), for the leak scan. */
  readonly output: string[];
  /** SIGKILL, resolved when the process is gone. */
  kill(): Promise<void>;
  /** SIGTERM and wait. */
  stop(): Promise<void>;
}

/** The environment of a child app wired to an in-process emulator and sandbox. */
export function childAppEnv(opts: {
  port: number | string;
  publicUrl?: string;
  signingSecret: string;
  emulator: { botToken: string; apiUrl: string };
  sandbox: { relayBaseUrl: string; eventsBaseUrl: string };
  storeUrl: string;
  key: Buffer;
  logLevel: string;
}): Record<string, string> {
  return {
    PORT: String(opts.port),
    ...(opts.publicUrl ? { PUBLIC_URL: opts.publicUrl } : {}),
    SLACK_SIGNING_SECRET: opts.signingSecret,
    SLACK_BOT_TOKEN: opts.emulator.botToken,
    SLACK_API_URL: opts.emulator.apiUrl,
    STORE_URL: opts.storeUrl,
    ONAIR_ENCRYPTION_KEY: opts.key.toString("base64"),
    RELAY_BASE_URL: opts.sandbox.relayBaseUrl,
    EVENTS_BASE_URL: opts.sandbox.eventsBaseUrl,
    LOG_LEVEL: opts.logLevel,
  };
}

const CHILD = fileURLToPath(new URL("./live-child.ts", import.meta.url));

const DIST_MAIN = fileURLToPath(new URL("../../dist/main.js", import.meta.url));

/**
 * The app in a child process. `compiled` runs the production build (`node dist/main.js`, after
 * `npm run build`) instead of the sources through tsx, as the benchmarks' RSS rows can ask.
 */
export async function spawnApp(
  env: Record<string, string>,
  opts: { compiled?: boolean } = {},
): Promise<ChildApp> {
  const args = opts.compiled ? ["--enable-source-maps", DIST_MAIN] : ["--import", "tsx", CHILD];
  const ready = opts.compiled ? /serving Slack on port (\d+)/ : /ONAIR_READY (\S+)/;
  const proc = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  const origin = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`child did not start: ${output.join("")}`)),
      // A cold start compiles the app twice (the main thread and the live engine's thread).
      40_000,
    );
    let buf = "";
    proc.stdout?.on("data", (d: Buffer) => {
      const s = String(d);
      output.push(s);
      buf += s;
      const m = ready.exec(buf);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(opts.compiled ? `http://127.0.0.1:${m[1]}` : m[1]);
      }
    });
    proc.stderr?.on("data", (d: Buffer) => output.push(String(d)));
    proc.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`child exited with ${code}: ${output.join("").slice(-2000)}`));
    });
  });
  return {
    origin,
    proc,
    output,
    async kill() {
      proc.kill("SIGKILL");
      await exited;
    },
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill("SIGTERM");
      await exited;
    },
  };
}

export { freePort };

/** What a team needs in the store to use an external sandbox: its events app credentials. */
export async function seedExternal(
  store: Store,
  opts: { team: string; organizer: string; eventsBaseUrl: string; title: string },
): Promise<SeededEvent> {
  await store.settings.put(opts.team, {
    ...structuredClone(DEFAULT_SETTINGS),
    eventsAppKey: SANDBOX_SEEDS.events.clientId,
    eventsAppSecret: SANDBOX_SEEDS.events.clientSecret,
    relayUsername: SANDBOX_SEEDS.relay.username,
    relayPassword: SANDBOX_SEEDS.relay.password,
  });
  const email = EMAILS[opts.organizer] ?? "";
  const grant = await fetch(`${opts.eventsBaseUrl}/api/security/v1/oauth/accesstoken`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({
      grant_type: "user_app",
      properties: {
        client_id: SANDBOX_SEEDS.events.clientId,
        client_secret: SANDBOX_SEEDS.events.clientSecret,
        user_email: email,
      },
    }),
  });
  const token = (await grant.json()) as {
    access_token: string;
    userId: number;
    enterpriseId: number;
  };
  const start = Date.now() + 3 * 3600_000;
  const created = await fetch(
    `${opts.eventsBaseUrl}/api/scheduling/v1/users/${token.userId}/events`,
    {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json",
        authorization: `Bearer ${token.access_token}`,
      },
      body: JSON.stringify({ title: opts.title, start, end: start + 3600_000, timezone: "UTC" }),
    },
  );
  if (created.status !== 201) throw new Error(`create event: ${created.status}`);
  const { id } = (await created.json()) as { id: string };
  await store.users.put(opts.team, opts.organizer, {
    email,
    userId: token.userId,
    enterpriseId: token.enterpriseId,
  });
  await store.events.put({
    team: opts.team,
    eventId: id,
    organizer: opts.organizer,
    upstreamUserId: token.userId,
    title: opts.title,
    subscriptions: [],
    cards: {},
    instances: {},
    createdAt: Date.now(),
  });
  return { eventId: id, title: opts.title };
}
