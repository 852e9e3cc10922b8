// A repository's tests, run against each store the service runs on: a SQLite file in a temporary directory and a
// fresh PostgreSQL database (TEST_DATABASE_URL's server, or the run's embedded one). The tests of one file share
// the store and keep apart by school id, as tenants do.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe } from 'vitest';
import type { Store } from '../../src/store/types.ts';
import { DIALECTS, openTestStore, type TestStore } from '../sync/helpers.ts';

export const T0 = '2026-11-01T08:00:00.000Z';
export const T1 = '2026-11-02T08:00:00.000Z';
export const T2 = '2026-11-03T08:00:00.000Z';

/** A school id no other test uses. */
export const newSchool = () => `school-${randomUUID().slice(0, 8)}`;

/**
 * `body`'s tests once per dialect, each run handed that dialect's store and a way to open another store on the same
 * database (a second replica, for tests of concurrent callers; the test closes what it opens).
 */
export function describeOnEachStore(
  title: string,
  body: (store: () => Store, reopen: () => Promise<Store>) => void,
): void {
  for (const dialect of DIALECTS)
    describe(`${title}: ${dialect}`, () => {
      let ts: TestStore | undefined;
      beforeAll(async () => {
        ts = await openTestStore(dialect);
      });
      afterAll(() => ts?.cleanup());
      const opened = () => {
        if (!ts) throw new Error(`the ${dialect} store did not open`);
        return ts;
      };
      body(
        () => opened().store,
        () => opened().reopen(),
      );
    });
}
