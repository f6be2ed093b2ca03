import { HAVE_POSTGRES_CLUSTER, HAVE_REDIS_SERVER } from "../helpers/servers.ts";

/**
 * vitest's global setup: the suites that need a service this machine lacks are skipped, and this
 * says so once, with what would run them. Under ONAIR_REQUIRE_SERVICES=1 (CI) nothing is
 * skipped: a missing service fails its suites instead, so there is nothing to say.
 */
export default function setup(): void {
  if (process.env.ONAIR_REQUIRE_SERVICES === "1") return;
  const missing: string[] = [];
  if (!process.env.TEST_REDIS_URL) {
    missing.push("the Redis store suites: TEST_REDIS_URL is not set (e.g. redis://127.0.0.1:6379)");
  }
  if (!process.env.TEST_POSTGRES_URL) {
    missing.push(
      "the Postgres store suites: TEST_POSTGRES_URL is not set (e.g. postgresql://postgres@127.0.0.1:5432/test)",
    );
  }
  if (!HAVE_REDIS_SERVER) {
    missing.push(
      "the Redis outage and kill tests: no redis-server binary to start one of their own",
    );
  }
  if (!HAVE_POSTGRES_CLUSTER) {
    missing.push(
      "the Postgres kill and freeze tests: they need initdb and pg_ctl, run as root (to start a cluster as postgres)",
    );
  }
  if (missing.length === 0) return;
  process.stderr.write(
    `\nSkipped, and why (set ONAIR_REQUIRE_SERVICES=1 to make a missing service a failure):\n${missing
      .map((m) => `  - ${m}`)
      .join("\n")}\n\n`,
  );
}
