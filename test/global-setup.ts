// Once per `vitest run`: the PostgreSQL server every test file makes its databases on (test/support/pg.ts), and
// the Chromium browser tests launch (test/support/browser.ts), both prepared side by side.
import type { TestProject } from 'vitest/node';
import { installChromium } from './support/chromium.ts';
import { startPostgresServer } from './support/postgres-server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The server test databases are made on, or why there is none (each PostgreSQL test then fails with it). */
    postgres: { adminUrl: string } | { error: string };
    /** The Chromium to launch, or why there is none (each browser test then fails with that message). */
    chromium: { path: string; env: Record<string, string>; source: string } | { error: string };
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [pg, browser] = await Promise.allSettled([startPostgresServer(), installChromium()]);
  // A component that cannot start fails only the tests that use it, with the reason.
  project.provide(
    'chromium',
    browser.status === 'fulfilled'
      ? { path: browser.value.executablePath, env: browser.value.env, source: browser.value.source }
      : { error: (browser.reason as Error).message },
  );
  project.provide(
    'postgres',
    pg.status === 'fulfilled' ? { adminUrl: pg.value.adminUrl } : { error: (pg.reason as Error).message },
  );
  return async () => {
    if (pg.status === 'fulfilled') await pg.value.stop();
  };
}
