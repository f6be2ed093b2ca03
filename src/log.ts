import { type DestinationStream, type Logger, pino, stdSerializers } from "pino";
import pretty from "pino-pretty";
import type { LogLevel } from "./config.ts";

export type { Logger };

/**
 * The one list of secret names. A field, header or query parameter carries a credential when its
 * name (any case) contains one of these words or is one of the short names: the log's redaction
 * below, `redactBody` (the upstream errors' redacted requests, upstream/errors.ts, and the
 * sandbox's call log, sandbox/calllog.ts) and their URLs and headers all ask isSecretName.
 */
export const SECRET_NAME_WORDS = [
  "token",
  "secret",
  "password",
  "passwd",
  "passcode",
  "auth",
  "cookie",
  "signature",
  "apikey",
  "api_key",
  "api-key",
  "credential",
] as const;
/** Secret only as the whole name: an OAuth `code`, a bare `key`. */
export const SECRET_SHORT_NAMES = ["code", "key"] as const;

export function isSecretName(name: string): boolean {
  const n = name.toLowerCase();
  return (
    (SECRET_SHORT_NAMES as readonly string[]).includes(n) ||
    SECRET_NAME_WORDS.some((w) => n.includes(w))
  );
}

/**
 * The secret fields of the app's own log objects, by exact name: pino's redaction takes paths,
 * not a rule. Each is a secret name by isSecretName (a unit test keeps them so); `scrub` below
 * catches secrets embedded in strings.
 */
export const SECRET_FIELDS = [
  "token",
  "accessToken",
  "access_token",
  "botToken",
  "userToken",
  "refreshToken",
  "password",
  "secret",
  "clientSecret",
  "client_secret",
  "signingSecret",
  "appSecret",
  "authorization",
  "meetingaccesstoken",
  "accesstoken",
  "code",
] as const;

const redactPaths = [
  ...SECRET_FIELDS,
  ...SECRET_FIELDS.map((p) => `*.${p}`),
  ...SECRET_FIELDS.map((p) => `*.*.${p}`),
  'headers["authorization"]',
  'headers["x-access-token"]',
  'headers["x-onair-secret"]',
  'req.headers["authorization"]',
  'req.headers["x-slack-signature"]',
];

/**
 * Known secret shapes inside free text: Slack tokens and Bearer/Basic credentials. Used on error
 * messages and anything that echoes a request, with NAMED_VALUES below.
 */
const SECRET_PATTERNS: readonly RegExp[] = [
  /xox[abposer]-[A-Za-z0-9-]+/g,
  /xapp-[A-Za-z0-9-]+/g,
  /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi,
];

/**
 * Named values inside free text, a query string or form (`name=value`) and JSON
 * (`"name":"value"`): the value is replaced when isSecretName(name), the one list deciding here
 * as everywhere else.
 */
const NAMED_VALUES: readonly RegExp[] = [
  /(?<![\w.-])([A-Za-z][\w.-]*)(=)([^&\s"']+)/g,
  /"([A-Za-z][\w.-]*)"(\s*:\s*)"(?:[^"\\]|\\.)*"/g,
];

export const REDACTED = "[redacted]";

/** Replaces secret-shaped substrings in free text. */
export function scrub(text: string): string {
  let out = text;
  for (const re of SECRET_PATTERNS) {
    out = out.replace(re, (_match, a: string | undefined) =>
      /^(Bearer|Basic)$/i.test(a ?? "") ? `${a} ${REDACTED}` : REDACTED,
    );
  }
  for (const re of NAMED_VALUES) {
    out = out.replace(re, (match, name: string, sep: string) => {
      if (!isSecretName(name)) return match;
      return sep === "=" ? `${name}=${REDACTED}` : `"${name}"${sep}"${REDACTED}"`;
    });
  }
  return out;
}

/**
 * A deep copy of a JSON value with every credential replaced: secret-named keys (isSecretName),
 * every value of a `headers` map (a webhook registration carries the receiver's shared secret
 * there), and secret-shaped text inside strings (scrub). The upstream errors' redacted request
 * and the sandbox's call log both show bodies through it. Past 8 levels deep, the rest is
 * replaced whole rather than walked.
 */
export function redactBody(value: unknown, depth = 0): unknown {
  if (depth > 8) return REDACTED;
  if (typeof value === "string") return scrub(value);
  if (Array.isArray(value)) return value.map((v) => redactBody(v, depth + 1));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (isSecretName(k)) out[k] = REDACTED;
      else if (k.toLowerCase() === "headers" && v !== null && typeof v === "object") {
        out[k] = Array.isArray(v)
          ? v.map(() => REDACTED)
          : Object.fromEntries(Object.keys(v).map((h) => [h, REDACTED]));
      } else out[k] = redactBody(v, depth + 1);
    }
    return out;
  }
  return value;
}

export interface LoggerOptions {
  level: LogLevel;
  /**
   * Where lines go; tests pass a stream to capture and scan them. Default: stdout, as JSON lines
   * for a log collector, or as pino-pretty's readable lines when stdout is a terminal.
   */
  destination?: DestinationStream;
}

/** A person at a terminal reads lines, not JSON. Synchronous: nothing is lost on exit. */
export function readableLines(out?: NodeJS.WritableStream): DestinationStream {
  return pretty({
    ...(out ? { destination: out } : {}),
    sync: true,
    colorize: true,
    translateTime: "SYS:HH:MM:ss.l",
    ignore: "pid,hostname,app",
  });
}

function defaultDestination(): DestinationStream | undefined {
  return process.stdout.isTTY ? readableLines() : undefined;
}

/**
 * The level of the process's own start and stop lines: the configured one, but never quieter
 * than info unless logging is off.
 */
export function lifecycleLevel(level: LogLevel): LogLevel {
  return level === "silent" || pino.levels.values[level]! <= pino.levels.values.info!
    ? level
    : "info";
}

export function createLogger({ level, destination }: LoggerOptions): Logger {
  return pino(
    {
      level,
      base: { app: "onair" },
      redact: { paths: redactPaths, censor: REDACTED },
      formatters: { level: (label) => ({ level: label }) },
      hooks: {
        // Strings in log calls (messages and interpolated values) pass through scrub.
        logMethod(args, method) {
          method.apply(
            this,
            args.map((a) => (typeof a === "string" ? scrub(a) : a)) as Parameters<typeof method>,
          );
        },
      },
      serializers: {
        err: (err: unknown) => {
          const s = stdSerializers.err(err as Error);
          if (typeof s.message === "string") s.message = scrub(s.message);
          // An error's code (ECONNREFUSED, decrypt_failed) is what an operator looks up; under
          // its own name, so the redaction of `code` fields (OAuth codes) leaves it readable.
          if (typeof s.code === "string" && /^[A-Za-z0-9_.:-]{1,64}$/.test(s.code)) {
            s.errorCode = s.code;
            delete s.code;
          }
          if (typeof s.stack === "string") s.stack = scrub(s.stack);
          return s;
        },
      },
    },
    destination ?? defaultDestination(),
  );
}
