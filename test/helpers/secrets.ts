import { Writable } from "node:stream";
import { inspect } from "node:util";
import { createLogger, type Logger } from "../../src/log.ts";

/**
 * Collects everything a suite could leak through (log lines, error messages, serialised error
 * objects) and checks that no credential appears in any of it, in plain, URL-encoded or base64 form.
 */
export interface SecretScanner {
  /** A trace-level logger whose lines are collected. */
  readonly logger: Logger;
  /** Everything collected so far, one entry per source. */
  readonly texts: readonly { where: string; text: string }[];
  add(where: string, text: string): void;
  /** message, userMessage, stack, JSON.stringify and util.inspect (whole cause chain). */
  addError(where: string, err: unknown): void;
  /** Leaks found, each named by where it was seen; the secret itself is masked. */
  findLeaks(secrets: readonly string[]): { where: string; secret: string }[];
  /** Throws naming every leak (masked) when any secret appears. */
  assertNoSecrets(secrets: readonly string[]): void;
}

export function mask(secret: string): string {
  return secret.length <= 4 ? "****" : `${secret.slice(0, 2)}…(${secret.length} chars)`;
}

/** The forms a secret takes on the wire and in logs. */
export function secretVariants(secret: string): string[] {
  const v = new Set([secret, encodeURIComponent(secret), Buffer.from(secret).toString("base64")]);
  v.add(JSON.stringify(secret).slice(1, -1));
  return [...v];
}

export function createSecretScanner(): SecretScanner {
  const texts: { where: string; text: string }[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      texts.push({ where: "log", text: String(chunk) });
      cb();
    },
  });
  const logger = createLogger({ level: "trace", destination });

  function addError(where: string, err: unknown): void {
    texts.push({ where: `${where} (inspect)`, text: inspect(err, { depth: 10 }) });
    let json: string;
    try {
      json = JSON.stringify(err) ?? "";
    } catch {
      json = "";
    }
    texts.push({ where: `${where} (JSON)`, text: json });
    // Own enumerable props, plus the non-enumerable ones a logger's serializer would read.
    let e: unknown = err;
    for (let depth = 0; e instanceof Error && depth < 10; depth++) {
      const u = (e as { userMessage?: unknown }).userMessage;
      texts.push({
        where: `${where} (message)`,
        text: [e.message, e.stack ?? "", typeof u === "string" ? u : ""].join("\n"),
      });
      texts.push({ where: `${where} (props)`, text: inspect({ ...e }, { depth: 10 }) });
      e = e.cause;
    }
    logger.error({ err }, `scanned error at ${where}`);
  }

  function findLeaks(secrets: readonly string[]) {
    const leaks: { where: string; secret: string }[] = [];
    for (const s of secrets) {
      if (s.length < 4) throw new Error("a secret to scan for must have at least 4 characters");
      for (const variant of secretVariants(s)) {
        for (const t of texts) {
          if (t.text.includes(variant)) leaks.push({ where: t.where, secret: mask(s) });
        }
      }
    }
    return leaks;
  }

  return {
    logger,
    texts,
    add(where, text) {
      texts.push({ where, text });
    },
    addError,
    findLeaks,
    assertNoSecrets(secrets) {
      const leaks = findLeaks(secrets);
      if (leaks.length > 0) {
        throw new Error(
          `secrets leaked: ${leaks.map((l) => `${l.secret} in ${l.where}`).join("; ")}`,
        );
      }
    },
  };
}
