// What a filter of the audit log may name (identity/audit-filters.ts), on a real SQLite store holding a sandbox
// school pulled over HTTP and a few audit records: a value that can match nothing is told as such, with what the
// filter takes; one the school knows, or a record the asker may see names, passes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  PERSON_TAKES,
  personProblem,
  teamProblem,
  templateProblem,
} from '../../src/identity/audit-filters.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import type { AuditRecord, Store } from '../../src/store/types.ts';
import { fullPull, openTestStore, type TestStore, testSchool } from '../sync/helpers.ts';
import { auditRecord } from './harness.ts';

const NOW = '2026-03-16T09:00:00.000Z';
let sandbox: Sandbox;
let ts: TestStore;
let store: Store;
let school: string;
let staffEmail: string;
let teamId: number;

const all = () => true;
const none = () => false;

beforeAll(async () => {
  sandbox = await startSandbox({ seed: 45, scale: 'small', now: NOW });
  ts = await openTestStore('sqlite');
  store = ts.store;
  school = testSchool(sandbox).id;
  await fullPull(store, sandbox, NOW);
  staffEmail = (await store.records.list(school, 'staff')).find((s) => s.email)!.email!;
  teamId = (await store.records.list(school, 'teams'))[0]!.id;
  const rec = (over: Partial<AuditRecord>) =>
    store.access.appendAudit(
      auditRecord({ at: NOW, actor: 'command line (root)', action: 'roster', schoolId: school, ...over }),
    );
  await rec({ teamId: 424242, template: 'old-school-template' });
  await rec({ actor: 'gone@former.example.org', action: 'sign-in-refused' });
});
afterAll(async () => {
  await ts?.cleanup();
  await sandbox?.close();
});

describe('personProblem', () => {
  it('passes the admin token, an actor the log shows the asker, and a staff member’s address in any case', async () => {
    expect(await personProblem(store, [school], ' Admin Token ', none)).toBeNull();
    expect(await personProblem(store, [school], 'command line (root)', all)).toBeNull();
    expect(await personProblem(store, [school], 'gone@former.example.org', all)).toBeNull();
    expect(await personProblem(store, [school], staffEmail.toUpperCase(), none)).toBeNull();
  });

  it('tells a value that is no address, or an address nobody has, with what the filter takes', async () => {
    // A who of the shape the log records, that no record the asker may see names.
    expect(await personProblem(store, [school], 'command line (root)', none)).toBe(
      'no audit record names "command line (root)" yet',
    );
    expect(await personProblem(store, [school], 'Jo Coach', all)).toBe(
      `"Jo Coach" is not an e-mail address: ${PERSON_TAKES}`,
    );
    expect(await personProblem(store, [school], 'gone@former.example.org', none)).toBe(
      'no staff member has the e-mail address "gone@former.example.org", and no audit record names it',
    );
    expect(await personProblem(store, [], staffEmail, all)).toMatch(
      /^no staff member has the e-mail address/,
    );
  });
});

describe('teamProblem and templateProblem', () => {
  it('passes a team of the schools, or one a visible record names; tells any other', async () => {
    expect(await teamProblem(store, [school], teamId, none)).toBeNull();
    expect(await teamProblem(store, [school], 424242, all)).toBeNull();
    expect(await teamProblem(store, [school], 424242, none)).toBe(
      'no team has the id 424242, and no audit record names it',
    );
    expect(await teamProblem(store, [], teamId, all)).toBe(
      `no team has the id ${teamId}, and no audit record names it`,
    );
  });

  it('passes a template rostercal has, or one a visible record names; tells any other with the list', async () => {
    const names = ['team-roster', 'attendance-sheet'];
    expect(await templateProblem(store, names, 'team-roster', none)).toBeNull();
    expect(await templateProblem(store, names, 'old-school-template', all)).toBeNull();
    expect(await templateProblem(store, names, 'old-school-template', none)).toBe(
      'no roster template "old-school-template" (team-roster, attendance-sheet), and no audit record names one',
    );
  });
});
