import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: "forks",
    // vitest's default is one fork per core minus one: a single fork on a 2-core machine. Most
    // suites wait on sockets and timers, so three forks finish far sooner without starving anyone.
    maxWorkers: 3,
    minWorkers: 1,
    reporters: ["default"],
  },
});
