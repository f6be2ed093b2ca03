import { z } from "zod";
import {
  base64Key,
  ConfigError,
  httpUrl,
  isLoopback,
  type StoreKind,
  storeKind,
} from "./config-checks.ts";

export { ConfigError, type StoreKind };

/**
 * All configuration comes from here: one pass over the environment, validated by zod.
 * An empty string counts as unset (a `.env` line like `SLACK_BOT_TOKEN=` means "not given"),
 * as t3-env does. A bad value stops start-up with one line naming the variable.
 */

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Config {
  /** "slack" serves a real workspace; "playground" runs the emulated workspace and sandbox. */
  readonly mode: "slack" | "playground";
  readonly port: number;
  /** No trailing slash. Webhook URLs are built from it. */
  readonly publicUrl: string;
  readonly slack: {
    /** undefined only in playground mode, where one is generated at start. */
    readonly signingSecret: string | undefined;
    readonly botToken: string | undefined;
    readonly oauth: { clientId: string; clientSecret: string; stateSecret: string } | undefined;
    /** Web API base with a trailing slash, as @slack/web-api expects; undefined = Slack's own. */
    readonly apiUrl: string | undefined;
  };
  readonly store: { readonly url: string; readonly kind: StoreKind };
  /** 32 bytes; undefined only in playground mode, where one is generated into data/. */
  readonly encryptionKey: Buffer | undefined;
  /**
   * ONAIR_ENCRYPTION_KEY_PREVIOUS: the key being rotated away from. Values it opens are sealed
   * again with the current key as they are read (and all at once by `npm run rekey`).
   */
  readonly previousEncryptionKey: Buffer | undefined;
  readonly upstream: {
    /** undefined = the embedded sandbox. No trailing slash. */
    readonly relayBaseUrl: string | undefined;
    readonly eventsBaseUrl: string | undefined;
    /**
     * Serve the embedded sandbox of both services (and its unauthenticated control API): always in
     * playground mode, with Slack credentials only when ONAIR_SANDBOX=1 asks for it.
     */
    readonly sandbox: boolean;
  };
  readonly logLevel: LogLevel;
  /** METRICS_TOKEN: when set, `/metrics` answers only `Authorization: Bearer <it>`. */
  readonly metricsToken: string | undefined;
}

const unsetIfEmpty = (v: unknown) => (typeof v === "string" && v.trim() === "" ? undefined : v);
const optionalString = z.preprocess(unsetIfEmpty, z.string().optional());

const rawSchema = z.object({
  PORT: optionalString,
  PUBLIC_URL: optionalString,
  SLACK_SIGNING_SECRET: optionalString,
  SLACK_CLIENT_ID: optionalString,
  SLACK_CLIENT_SECRET: optionalString,
  SLACK_STATE_SECRET: optionalString,
  SLACK_BOT_TOKEN: optionalString,
  SLACK_API_URL: optionalString,
  STORE_URL: optionalString,
  ONAIR_ENCRYPTION_KEY: optionalString,
  ONAIR_ENCRYPTION_KEY_PREVIOUS: optionalString,
  RELAY_BASE_URL: optionalString,
  EVENTS_BASE_URL: optionalString,
  ONAIR_SANDBOX: optionalString,
  LOG_LEVEL: optionalString,
  METRICS_TOKEN: optionalString,
});

type Raw = z.output<typeof rawSchema>;

/**
 * Every problem found, in the order the variables are read: `checked` gives a check's value, or
 * `fallback` when it throws a ConfigError (noted), so that reading goes on past a bad variable.
 */
class Problems {
  readonly list: ConfigError[] = [];
  add(problem: ConfigError): void {
    this.list.push(problem);
  }
  checked<T>(check: () => T, fallback: T): T {
    try {
      return check();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      this.list.push(err);
      return fallback;
    }
  }
}

/** PORT and PUBLIC_URL (its default names the port). */
function listenOf(raw: Raw, p: Problems): { port: number; publicUrl: string } {
  const port = p.checked(() => {
    if (raw.PORT === undefined) return 3000;
    if (!/^\d{1,5}$/.test(raw.PORT.trim()) || Number(raw.PORT) > 65535) {
      throw new ConfigError("PORT", `must be a whole number from 0 to 65535 (got "${raw.PORT}")`);
    }
    return Number(raw.PORT);
  }, 3000);
  const publicUrl = p.checked(
    () =>
      raw.PUBLIC_URL !== undefined
        ? httpUrl("PUBLIC_URL", raw.PUBLIC_URL)
        : `http://localhost:${port}`,
    `http://localhost:${port}`,
  );
  return { port, publicUrl };
}

/** Slack's credentials, which also decide the mode: Slack with any, the playground without. */
function slackOf(raw: Raw, p: Problems): Pick<Config, "mode" | "slack"> {
  const oauthVars = [raw.SLACK_CLIENT_ID, raw.SLACK_CLIENT_SECRET, raw.SLACK_STATE_SECRET];
  const oauthGiven = oauthVars.filter((v) => v !== undefined).length;
  if (oauthGiven > 0 && oauthGiven < 3) {
    (["SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET", "SLACK_STATE_SECRET"] as const)
      .filter((_, i) => oauthVars[i] === undefined)
      .forEach((missing) => {
        p.add(
          new ConfigError(
            missing,
            "is required when any of SLACK_CLIENT_ID, SLACK_CLIENT_SECRET, SLACK_STATE_SECRET is set",
          ),
        );
      });
  }
  const oauth =
    oauthGiven === 3
      ? {
          clientId: raw.SLACK_CLIENT_ID!,
          clientSecret: raw.SLACK_CLIENT_SECRET!,
          stateSecret: raw.SLACK_STATE_SECRET!,
        }
      : undefined;
  if (raw.SLACK_BOT_TOKEN !== undefined && !/^xox[bp]-/.test(raw.SLACK_BOT_TOKEN)) {
    p.add(new ConfigError("SLACK_BOT_TOKEN", "must be a bot token starting with xoxb-"));
  }
  if (raw.SLACK_BOT_TOKEN !== undefined && oauth) {
    p.add(
      new ConfigError(
        "SLACK_BOT_TOKEN",
        "must not be set together with SLACK_CLIENT_ID (choose one workspace or OAuth)",
      ),
    );
  }
  const mode: Config["mode"] =
    raw.SLACK_BOT_TOKEN !== undefined || oauthGiven > 0 ? "slack" : "playground";

  if (mode === "slack" && raw.SLACK_SIGNING_SECRET === undefined) {
    p.add(
      new ConfigError(
        "SLACK_SIGNING_SECRET",
        "is required with Slack credentials (find it under Basic Information in your app's settings)",
      ),
    );
  }
  if (raw.SLACK_SIGNING_SECRET !== undefined && raw.SLACK_SIGNING_SECRET.length < 8) {
    p.add(new ConfigError("SLACK_SIGNING_SECRET", "is too short to be a Slack signing secret"));
  }
  const apiUrl = p.checked(
    () =>
      raw.SLACK_API_URL !== undefined
        ? `${httpUrl("SLACK_API_URL", raw.SLACK_API_URL)}/`
        : undefined,
    undefined,
  );
  const slack = {
    signingSecret: raw.SLACK_SIGNING_SECRET,
    botToken: raw.SLACK_BOT_TOKEN,
    oauth,
    apiUrl,
  };
  return { mode, slack };
}

/** The encryption key (required with Slack) and the one being rotated away from. */
function keysOf(
  raw: Raw,
  mode: Config["mode"],
  p: Problems,
): Pick<Config, "encryptionKey" | "previousEncryptionKey"> {
  const encryptionKey = p.checked(
    () => base64Key("ONAIR_ENCRYPTION_KEY", raw.ONAIR_ENCRYPTION_KEY),
    undefined,
  );
  const previousEncryptionKey = p.checked(
    () => base64Key("ONAIR_ENCRYPTION_KEY_PREVIOUS", raw.ONAIR_ENCRYPTION_KEY_PREVIOUS),
    undefined,
  );
  if (previousEncryptionKey && encryptionKey?.equals(previousEncryptionKey)) {
    p.add(
      new ConfigError(
        "ONAIR_ENCRYPTION_KEY_PREVIOUS",
        "is the same as ONAIR_ENCRYPTION_KEY; it names the old key while moving to a new one",
      ),
    );
  }
  if (raw.ONAIR_ENCRYPTION_KEY === undefined && mode === "slack") {
    p.add(
      new ConfigError(
        "ONAIR_ENCRYPTION_KEY",
        "is required with Slack credentials (make one with: openssl rand -base64 32)",
      ),
    );
  }
  return { encryptionKey, previousEncryptionKey };
}

/**
 * The two upstream services: their URLs, or the embedded sandbox (asked for, or the playground's
 * default). Services elsewhere must reach PUBLIC_URL with their webhooks.
 */
function servicesOf(
  raw: Raw,
  mode: Config["mode"],
  publicUrl: string,
  p: Problems,
): Config["upstream"] {
  const relayBaseUrl = p.checked(
    () =>
      raw.RELAY_BASE_URL !== undefined ? httpUrl("RELAY_BASE_URL", raw.RELAY_BASE_URL) : undefined,
    undefined,
  );
  const eventsBaseUrl = p.checked(
    () =>
      raw.EVENTS_BASE_URL !== undefined
        ? httpUrl("EVENTS_BASE_URL", raw.EVENTS_BASE_URL)
        : undefined,
    undefined,
  );

  let sandboxAsked = false;
  if (raw.ONAIR_SANDBOX !== undefined) {
    if (raw.ONAIR_SANDBOX.trim() === "1") sandboxAsked = true;
    else if (raw.ONAIR_SANDBOX.trim() !== "0") {
      p.add(new ConfigError("ONAIR_SANDBOX", `must be 1 or 0 (got "${raw.ONAIR_SANDBOX}")`));
    }
  }
  const upstreamMissing = raw.RELAY_BASE_URL === undefined || raw.EVENTS_BASE_URL === undefined;
  if (mode === "slack" && upstreamMissing && !sandboxAsked) {
    p.add(
      new ConfigError(
        raw.RELAY_BASE_URL === undefined ? "RELAY_BASE_URL" : "EVENTS_BASE_URL",
        "is required with Slack credentials: set RELAY_BASE_URL and EVENTS_BASE_URL to your services (or ONAIR_SANDBOX=1 to serve the embedded sandbox, for tests and demos only)",
      ),
    );
  }
  // Services elsewhere deliver webhooks to PUBLIC_URL: a loopback one is unreachable for them,
  // and every event would go without its live card while looking fine here.
  const far = (
    [
      ["RELAY_BASE_URL", relayBaseUrl],
      ["EVENTS_BASE_URL", eventsBaseUrl],
    ] as const
  ).filter(([, u]) => u !== undefined && !isLoopback(u));
  if (mode === "slack" && far.length > 0 && isLoopback(publicUrl)) {
    p.add(
      new ConfigError(
        "PUBLIC_URL",
        `${raw.PUBLIC_URL === undefined ? "is unset" : `is ${publicUrl}`}, an address only this machine reaches, while ${far.map(([v]) => v).join(" and ")} ${far.length > 1 ? "are services" : "is a service"} elsewhere that must reach it (webhooks): set PUBLIC_URL to the address the services and Slack reach this app at (https://YOUR-HOST)`,
      ),
    );
  }
  return {
    relayBaseUrl,
    eventsBaseUrl,
    sandbox: sandboxAsked || (mode === "playground" && upstreamMissing),
  };
}

/**
 * Reads and checks the environment. Throws a ConfigError naming the first bad variable, whose
 * `problems` name every bad one: an operator fixes them all in one go, not one per restart.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const p = new Problems();
  const raw = rawSchema.parse(env);
  const { port, publicUrl } = listenOf(raw, p);
  const { mode, slack } = slackOf(raw, p);
  const storeUrl = raw.STORE_URL ?? "sqlite://data/onair.sqlite";
  const kind = p.checked(() => storeKind(storeUrl), "memory" as StoreKind);
  const keys = keysOf(raw, mode, p);
  const upstream = servicesOf(raw, mode, publicUrl, p);

  const level = (raw.LOG_LEVEL ?? "info").toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(level)) {
    p.add(
      new ConfigError(
        "LOG_LEVEL",
        `must be one of ${LOG_LEVELS.join(", ")} (got "${raw.LOG_LEVEL}")`,
      ),
    );
  }
  if (raw.METRICS_TOKEN !== undefined && raw.METRICS_TOKEN.length < 16) {
    p.add(
      new ConfigError(
        "METRICS_TOKEN",
        "must be at least 16 characters (make one with: openssl rand -hex 32)",
      ),
    );
  }

  const [first] = p.list;
  if (first) {
    first.problems = p.list;
    throw first;
  }
  return {
    mode,
    port,
    publicUrl,
    slack,
    store: { url: storeUrl, kind },
    ...keys,
    upstream,
    logLevel: level as LogLevel,
    metricsToken: raw.METRICS_TOKEN,
  };
}
