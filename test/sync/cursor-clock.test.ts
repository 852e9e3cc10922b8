// A cursor in the upstream's future (issue 41): one written by this server's clock before cursors followed the
// upstream's, or left by an upstream whose clock then went back by more than the overlap. A listing asked with it
// could not hold what was stamped before it, so the resource is read whole on the next pull instead of the edit
// being lost until a full pull. In process against a real sandbox and SQLite store.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SchoolConfig } from '../../src/config.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { pullSchool } from '../../src/sync/pull.ts';
import { formatSummary } from '../../src/sync/report.ts';
import type { UpstreamClient } from '../../src/upstream/api.ts';
import { TEST_NOW } from '../support/clock.ts';
import { openTestStore, type TestStore, testClient, testSchool } from './helpers.ts';

const MINUTE = 60_000;

describe('a sessions cursor in the upstream’s future', () => {
  let sandbox: Sandbox;
  let ts: TestStore;
  let client: UpstreamClient;
  let school: SchoolConfig;
  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 8, scale: 'small', now: TEST_NOW });
    ts = await openTestStore('sqlite');
    client = testClient(sandbox);
    school = testSchool(sandbox);
  });
  afterAll(async () => {
    await ts?.cleanup();
    await sandbox?.close();
  });

  it('is not trusted: the next pull reads the sessions whole and the edit arrives', async () => {
    const now = () => new Date(sandbox.now());
    const pull = (kind: 'full' | 'incremental') => pullSchool({ now, store: ts.store, client, school, kind });
    expect((await pull('full')).status).toBe('succeeded');

    const at = Date.parse(sandbox.now());
    const session = sandbox.school.sessions.find((s) => s.start > at + 86_400_000 && !s.cancelled)!;
    const email = sandbox.school.users.find((u) => u.email)!.email;
    await client.updateSessions({ email, sessions: [{ id: session.id, title: 'Retitled long ago' }] });
    // Ten minutes later upstream; the cursor, as this server's clock 5 min ahead wrote it before the fix, lies
    // beyond even that.
    sandbox.setNow(new Date(at + 10 * MINUTE).toISOString());
    await ts.store.records.setCursor(
      school.id,
      'updatedAfter:sessions',
      new Date(at + 13 * MINUTE).toISOString(),
    );

    // Asked from the upstream's future, the listing holds nothing; the cursor it leaves reads everything.
    const missed = await pull('incremental');
    expect(missed.counts.sessions).toMatchObject({ changed: 0 });
    expect(await ts.store.records.getCursor(school.id, 'updatedAfter:sessions')).toBe(
      new Date(0).toISOString(),
    );

    const read = await pull('incremental');
    expect(read.counts.sessions).toMatchObject({ changed: 1 });
    // The sandbox runs weeks off the real clock (TEST_NOW): `sync`'s summary says so.
    expect(formatSummary(read, 'Hillcrest College').join('\n')).toMatch(
      /upstream clock: (\d+ d )?(\d+ h )?(\d+ min )?(\d+ s )?(behind|ahead of) this server's/,
    );
    expect((await ts.store.records.get(school.id, 'sessions', session.id))!.title).toBe('Retitled long ago');
    // And the cursor is the upstream's time again, less the overlap.
    const cursor = Date.parse((await ts.store.records.getCursor(school.id, 'updatedAfter:sessions'))!);
    expect(Math.abs(cursor - (Date.parse(sandbox.now()) - 120_000))).toBeLessThan(10_000);
  });
});
