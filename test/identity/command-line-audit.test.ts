// Audit records of what is done at the command line (identity/command-line-audit.ts), on a real SQLite store: the
// actor is the operating-system account that ran the command, with no web session or client address.
import { userInfo } from 'node:os';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { auditCommandLine, commandLineActor } from '../../src/identity/command-line-audit.ts';
import type { Store } from '../../src/store/types.ts';
import { openTestStore, type TestStore } from '../sync/helpers.ts';

let ts: TestStore;
let store: Store;
beforeAll(async () => {
  ts = await openTestStore('sqlite');
  store = ts.store;
});
afterAll(() => ts?.cleanup());

it('names the account that ran the command', () => {
  expect(commandLineActor()).toBe(`command line (${userInfo().username})`);
});

it('records what was done, by whom, now, with nothing of a web session', async () => {
  const before = Date.now();
  await auditCommandLine(store, { action: 'feed-rotate', schoolId: 'north', detail: 'team 7' });
  await auditCommandLine(store, { action: 'roster', schoolId: 'north', teamId: 7, template: 'team-roster' });
  const [printed, rotated] = await store.access.listAudit({ schoolId: 'north' });
  expect(rotated).toMatchObject({
    action: 'feed-rotate',
    schoolId: 'north',
    actor: commandLineActor(),
    teamId: null,
    sessionId: null,
    template: null,
    clientAddress: null,
    staffSession: null,
    detail: 'team 7',
  });
  expect(Date.parse(rotated!.at)).toBeGreaterThanOrEqual(before - 1000);
  expect(Date.parse(rotated!.at)).toBeLessThanOrEqual(Date.now());
  expect(printed).toMatchObject({ action: 'roster', teamId: 7, template: 'team-roster', detail: null });
});
