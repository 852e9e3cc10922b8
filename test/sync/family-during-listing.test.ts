// Review of 6085a93 ("a full listing that returned every record the store held when its download began reads no
// live ids"): a family's reported absence written to the store while the full listing of absences is read (the
// listing cannot hold it yet) is neither lost nor counted as missing, whether the listing returned every stored
// absence (the shortcut) or left one out because the upstream deleted it; the deleted one goes only after a second
// complete listing leaves it out, as absences have no single read.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Id } from '../../src/domain/types.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import type { PullProgress } from '../../src/sync/pull/types.ts';
import { pullSchool } from '../../src/sync/pull.ts';
import { TEST_NOW } from '../support/clock.ts';
import { DIALECTS, openTestStore, type TestStore, testClient, testSchool } from './helpers.ts';

describe.each(DIALECTS)("a family's absence written during the absences' full listing (%s)", (dialect) => {
  let sandbox: Sandbox;
  let ts: TestStore;
  const full = (onProgress?: (e: PullProgress) => void) =>
    pullSchool({
      now: () => new Date(sandbox.now()),
      store: ts.store,
      client: testClient(sandbox),
      school: testSchool(sandbox),
      kind: 'full',
      ...(onProgress ? { onProgress } : {}),
    });
  const live = (id: Id) => ts.store.records.get('hillcrest', 'absences', id).then((a) => a !== null);

  /** What a family's act does (families/absences.ts): the absence written upstream, then what it answered stored. */
  async function familyReports(): Promise<Id> {
    const now = Date.parse(sandbox.now());
    const model = sandbox.school.absences.find((a) => a.start > now)!;
    const [made] = await testClient(sandbox).createAbsences([
      {
        studentId: model.studentId,
        startDate: new Date(model.start).toISOString(),
        endDate: new Date(model.end).toISOString(),
        explained: true,
        reason: 'family: sick',
      },
    ]);
    await ts.store.records.upsert('hillcrest', 'absences', [made!], sandbox.now());
    return made!.id;
  }

  /** A full pull whose absences' listing has been read when the family's absence lands. */
  async function fullWithFamily(): Promise<{ status: string; family: Id }> {
    let family: Promise<Id> | null = null;
    const summary = await full((e) => {
      if (e.type === 'page' && e.kind === 'absences' && e.page === e.lastPage) family ??= familyReports();
    });
    expect(family).not.toBeNull();
    return { status: summary.status, family: await family! };
  }

  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 7, scale: 'small', now: TEST_NOW });
    ts = await openTestStore(dialect);
  });
  beforeEach(async () => {
    expect((await full()).status).toBe('succeeded');
    expect((await full()).status).toBe('succeeded');
  });
  afterAll(async () => {
    await ts?.cleanup();
    await sandbox?.close();
  });

  it('every stored absence listed (no read of live ids): the family absence stays live and unmarked', async () => {
    const { status, family } = await fullWithFamily();
    expect(status).toBe('succeeded');
    expect(await live(family)).toBe(true);
    expect((await ts.store.records.listMissing('hillcrest', 'absences')).size).toBe(0);
    expect((await full()).counts.absences).toMatchObject({ deleted: 0 });
    expect(await live(family)).toBe(true);
  });

  it('one absence deleted upstream: marked once, deleted at the second listing; the family absence kept', async () => {
    const now = Date.parse(sandbox.now());
    const gone = sandbox.school.absences.find((a) => a.start > now && a.reason !== 'family: sick')!;
    await testClient(sandbox).deleteAbsences([gone.id]);
    const { status, family } = await fullWithFamily();
    expect(status).toBe('succeeded');
    expect(await live(gone.id)).toBe(true);
    expect(await live(family)).toBe(true);
    expect([...(await ts.store.records.listMissing('hillcrest', 'absences')).keys()]).toContain(gone.id);
    const version = await ts.store.records.dataVersion('hillcrest');
    const second = await full();
    expect(second.counts.absences).toMatchObject({ deleted: 1 });
    expect(await live(gone.id)).toBe(false);
    expect(await live(family)).toBe(true);
    expect((await ts.store.records.listMissing('hillcrest', 'absences')).size).toBe(0);
    expect(await ts.store.records.dataVersion('hillcrest')).toBeGreaterThan(version);
  });
});
