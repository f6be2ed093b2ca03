import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "packages/*/test/**/*.test.ts"],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: "forks",
    // vitest's default is one fork per core minus one: a single fork on a 2-core machine. Most
    // suites wait on sockets and timers, so three forks finish far sooner without starving anyone.
    maxWorkers: 3,
    reporters: ["default"],
    // A green run is quiet: console output is shown for failing tests only.
    silent: "passed-only",
    // Says once which suites are skipped for want of a service, and what would run them.
    globalSetup: ["test/setup/services.ts"],
  },
});
