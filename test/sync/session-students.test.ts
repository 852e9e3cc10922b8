// Review of 6085a93 ("the kind's lock and the data-version bump once per transaction, just before commit"): a
// change to a session's students alone (its membership rows) reaches the store at the next incremental pull,
// both ways, and moves the data version each time; the pull's other resources, unchanged, open no transaction.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Id } from '../../src/domain/types.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { pullSchool } from '../../src/sync/pull.ts';
import { TEST_NOW } from '../support/clock.ts';
import { DIALECTS, openTestStore, type TestStore, testClient, testSchool } from './helpers.ts';

describe.each(DIALECTS)("a session's students changed alone (%s)", (dialect) => {
  let sandbox: Sandbox;
  let ts: TestStore;
  const incremental = () => {
    sandbox.setNow(new Date(Date.parse(sandbox.now()) + 60_000).toISOString());
    return pullSchool({
      now: () => new Date(sandbox.now()),
      store: ts.store,
      client: testClient(sandbox),
      school: testSchool(sandbox),
      kind: 'incremental',
    });
  };
  const sessionsOf = async (studentId: Id) =>
    (await ts.store.records.listSessions('hillcrest', { studentId })).map((s) => s.id);

  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 7, scale: 'small', now: TEST_NOW });
    ts = await openTestStore(dialect);
    const first = await pullSchool({
      now: () => new Date(sandbox.now()),
      store: ts.store,
      client: testClient(sandbox),
      school: testSchool(sandbox),
      kind: 'full',
    });
    expect(first.status).toBe('succeeded');
  });
  afterAll(async () => {
    await ts?.cleanup();
    await sandbox?.close();
  });

  it('a student put on a session and taken off again: the store follows, the data version moves each time', async () => {
    const now = Date.parse(sandbox.now());
    const session = sandbox.school.sessions.find((s) => s.start > now && s.status === 'confirmed')!;
    const student = sandbox.school.students.find((p) => !session.rosterIds.includes(p.id))!;
    expect(await sessionsOf(student.id)).not.toContain(session.id);
    const email = sandbox.school.users.find((u) => u.email)!.email;
    const client = testClient(sandbox);

    for (const studentIds of [[student.id], []]) {
      await client.updateSessions({ email, sessions: [{ id: session.id, studentIds }] });
      const version = await ts.store.records.dataVersion('hillcrest');
      const summary = await incremental();
      expect(summary.status).toBe('succeeded');
      expect(summary.counts.sessions).toMatchObject({ changed: 1, added: 0, deleted: 0 });
      expect(summary.counts.teams).toMatchObject({ changed: 0, added: 0, deleted: 0 });
      expect(await ts.store.records.dataVersion('hillcrest')).toBeGreaterThan(version);
      if (studentIds.length > 0) expect(await sessionsOf(student.id)).toContain(session.id);
      else expect(await sessionsOf(student.id)).not.toContain(session.id);
    }
  });
});
