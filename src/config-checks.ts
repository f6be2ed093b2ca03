/**
 * The checks of one configuration value each (config.ts reads the environment with them): a bad
 * value throws a ConfigError naming its variable, without echoing a value that may be a secret.
 */

export type StoreKind = "sqlite" | "redis" | "postgres" | "memory";

export class ConfigError extends Error {
  override readonly name = "ConfigError";
  /** Every bad variable found in the same pass, this one first: all are told at once. */
  problems: readonly ConfigError[] = [this];
  constructor(
    readonly variable: string,
    readonly problem: string,
  ) {
    super(`${variable} ${problem}`);
  }
}

export function httpUrl(variable: string, value: string): string {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    // The value is not echoed: a URL may carry a user and password.
    throw new ConfigError(variable, "must be an absolute http(s) URL");
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    throw new ConfigError(variable, `must start with http:// or https:// (got "${u.protocol}")`);
  }
  if (u.search || u.hash) {
    throw new ConfigError(variable, "must not carry a query string or fragment");
  }
  return value.replace(/\/+$/, "");
}

export function storeKind(value: string): StoreKind {
  const scheme = value.split(":", 1)[0]?.toLowerCase();
  switch (scheme) {
    case "sqlite":
      if (!/^sqlite:\/\/.+/.test(value)) {
        throw new ConfigError(
          "STORE_URL",
          "must name a file, as sqlite://PATH (for example sqlite://data/onair.sqlite)",
        );
      }
      if (/^sqlite:\/\/:memory:/.test(value)) {
        throw new ConfigError(
          "STORE_URL",
          "must name a file; an in-memory SQLite loses data on restart (use memory:// for tests)",
        );
      }
      return "sqlite";
    case "redis":
    case "rediss":
      return "redis";
    case "postgres":
    case "postgresql":
      return "postgres";
    case "memory":
      return "memory";
    default:
      throw new ConfigError(
        "STORE_URL",
        `must start with sqlite://, redis://, rediss://, postgresql:// or memory:// (got "${scheme ?? ""}:")`,
      );
  }
}

export function base64Key(variable: string, value: string | undefined): Buffer | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text) || Buffer.from(text, "base64").length !== 32) {
    throw new ConfigError(
      variable,
      "must be 32 bytes in base64 (make one with: openssl rand -base64 32)",
    );
  }
  return Buffer.from(text, "base64");
}

/** Loopback names: an address only this machine can reach. */
export function isLoopback(url: string): boolean {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return (
    host === "localhost" ||
    host.endsWith(".localhost") ||
    /^127\.\d+\.\d+\.\d+$/.test(host) ||
    host === "::1" ||
    host === "0.0.0.0"
  );
}
