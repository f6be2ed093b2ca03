/**
 * How a store is named in logs and errors: scheme, host and database, never credentials. Apart
 * from the backends so that naming a store loads no client library (see openBackend).
 */

export function postgresLabel(url: string): string {
  try {
    const u = new URL(url);
    return `postgres ${u.host}${u.pathname}`;
  } catch {
    return "postgres";
  }
}

export function redisLabel(url: string): string {
  try {
    const u = new URL(url);
    return `redis ${u.host}${u.pathname && u.pathname !== "/" ? u.pathname : ""}`;
  } catch {
    return "redis";
  }
}
