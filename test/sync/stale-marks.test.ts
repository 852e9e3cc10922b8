// Review of 79af380 ("missing-record marks of every kind are read once at the run's start"): only the run under
// the school's lease is meant to change them, but a pull that held the lease before and outlived it (a stalled
// replica) can write them after this run read them: the deletion path re-reads them for that reason. An absence
// such a pull marked as left out, that this incremental pull then sees again, must not stay marked: otherwise the
// next full listing that omits it without looking short (a page dropped and the count lowered to match) deletes it
// at once, though it was seen in between and is still upstream.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Id } from '../../src/domain/types.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import type { PullProgress } from '../../src/sync/pull/types.ts';
import { pullSchool } from '../../src/sync/pull.ts';
import { TEST_NOW } from '../support/clock.ts';
import { DIALECTS, listAll, openTestStore, type TestStore, testClient, testSchool } from './helpers.ts';

describe.each(DIALECTS)('marks written after the run read them (%s)', (dialect) => {
  let sandbox: Sandbox;
  let ts: TestStore;
  const pull = (kind: 'full' | 'incremental', onProgress?: (e: PullProgress) => void) => {
    sandbox.setNow(new Date(Date.parse(sandbox.now()) + 60_000).toISOString());
    return pullSchool({
      now: () => new Date(sandbox.now()),
      store: ts.store,
      client: testClient(sandbox),
      school: testSchool(sandbox),
      kind,
      ...(onProgress ? { onProgress } : {}),
    });
  };
  /** The absence a truncated listing drops (its last record, the count lowered to match). */
  async function droppedByTruncation(): Promise<Id> {
    const list = async () => (await listAll(testClient(sandbox).preExplainedAbsences({}))).map((a) => a.id);
    const whole = await list();
    sandbox.setListingFaults({ 'pre-explained-absences': 'truncated' });
    const cut = await list();
    sandbox.setListingFaults({});
    const dropped = whole.filter((id) => !cut.includes(id));
    expect(dropped).toHaveLength(1);
    return dropped[0]!;
  }

  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 7, scale: 'small', now: TEST_NOW });
    ts = await openTestStore(dialect);
    expect((await pull('full')).status).toBe('succeeded');
  });
  afterAll(async () => {
    await ts?.cleanup();
    await sandbox?.close();
  });

  it('an absence marked by an outliving pull and seen again by this one is unmarked, and a later partial listing keeps it', async () => {
    const x = await droppedByTruncation();
    const model = sandbox.school.absences.find((a) => a.id === x)!;
    // Edited upstream: this incremental pull lists it.
    await testClient(sandbox).updateAbsences([
      {
        id: x,
        studentId: model.studentId,
        startDate: new Date(model.start).toISOString(),
        endDate: new Date(model.end).toISOString(),
        explained: model.explained,
        reason: `${model.reason} (edited)`,
      },
    ]);
    // The outliving pull's transaction marks it after this run read the marks, before the absences' turn.
    let marked: Promise<void> | null = null;
    const seen = await pull('incremental', (e) => {
      if (e.type === 'resource' && e.kind === 'teams')
        marked ??= ts.store.records.setMissing('hillcrest', 'absences', [x], sandbox.now());
    });
    await marked;
    expect(seen.status).toBe('succeeded');
    expect(seen.counts.absences).toMatchObject({ changed: 1 });
    expect([...(await ts.store.records.listMissing('hillcrest', 'absences')).keys()]).not.toContain(x);

    // A full listing that leaves it out without looking short: one omission, kept.
    sandbox.setListingFaults({ 'pre-explained-absences': 'truncated' });
    const partial = await pull('full');
    sandbox.setListingFaults({});
    expect(partial.counts.absences).toMatchObject({ deleted: 0 });
    expect(await ts.store.records.get('hillcrest', 'absences', x)).not.toBeNull();
  });
});
