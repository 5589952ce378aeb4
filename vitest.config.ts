import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    setupFiles: ["test/setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests start servers on loopback; two cores, so keep it modest.
    maxWorkers: 2,
  },
});
