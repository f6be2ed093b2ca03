import { type Logger as BoltLogger, LogLevel } from "@slack/bolt";
import { type Logger, REDACTED, scrub } from "../log.ts";

/**
 * What Bolt and the Web API client print at debug level beyond the one list of secret names
 * (`scrub` already hides every secret-named value of a JSON or form body: `client_secret`, the
 * OAuth `code`, refresh tokens): the OAuth `state`, which stands in for the person mid-install.
 */
const BOLT_SECRETS: readonly RegExp[] = [
  /("state"\s*:\s*)"(?:[^"\\]|\\.)*"/gi,
  /(\bstate=)[^&\s"']+/gi,
];

export function scrubBolt(text: string): string {
  let out = scrub(text);
  for (const re of BOLT_SECRETS) {
    out = out.replace(re, (_m, head: string) =>
      head.endsWith("=") ? `${head}${REDACTED}` : `${head}"${REDACTED}"`,
    );
  }
  return out;
}

/**
 * The Web API client's debug dumps of whole bodies. A response can echo what a person typed
 * into a modal (views.update returns the view's state, secrets fields included), so no pattern
 * is enough: the dump is left out and the line kept.
 */
const BODY_DUMP = /^(http request (?:body|result|headers):).*$/s;

/**
 * Warnings Slack attaches to a call that did what was asked, in the normal course of things (the
 * Web API client logs each at warn): `already_in_channel` answers every conversations.join the
 * bot did not need. Debug, not an operator's concern.
 */
const ORDINARY_WARNINGS = /^already_in_channel\b/;

/** Bolt logs through our pino logger, so its lines get the same redaction as ours. */
export function boltLogger(logger: Logger): BoltLogger {
  const child = logger.child({ component: "bolt" });
  let level: LogLevel = LogLevel.INFO;
  const text = (msg: unknown[]) =>
    scrubBolt(
      msg
        .map((m) =>
          m instanceof Error ? m.message : typeof m === "string" ? m : JSON.stringify(m),
        )
        .join(" "),
    );
  return {
    debug: (...msg) => child.debug(text(msg).replace(BODY_DUMP, "$1 [omitted]")),
    info: (...msg) => child.info(text(msg)),
    warn: (...msg) => {
      const line = text(msg);
      if (ORDINARY_WARNINGS.test(line)) child.debug(line);
      else child.warn(line);
    },
    error: (...msg) => child.error(text(msg)),
    setLevel: (l) => {
      level = l;
    },
    getLevel: () => level,
    setName: () => {},
  };
}
