// What a resource's listing shows gone (sync/pull/detect-deletions.ts), in a real SQLite store: a partial listing
// never deletes; a record a complete full listing leaves out once is marked and kept, and deleted only when the
// next complete listing confirms it (or a single read answers 404); a record seen again loses its mark; the
// deletion guard holds back a shrunken listing; an incremental listing deletes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Id } from '../../../src/domain/types.ts';
import type { ResourceKind } from '../../../src/store/types.ts';
import { applyDeletions, detectDeletions } from '../../../src/sync/pull/detect-deletions.ts';
import type { Confirmation, Gathered } from '../../../src/sync/pull/gathered.ts';
import { judgeListing } from '../../../src/sync/pull/judge-listing.ts';
import type { ResourceRunContext } from '../../../src/sync/pull/types.ts';
import { newSchool, T0, T1 } from '../../store/each-store.ts';
import { student, team } from '../../store/fixtures.ts';
import { openTestStore, type TestStore } from '../helpers.ts';
import { gathered, spec, stageContext, stageSchool } from './stage-context.ts';

let ts: TestStore;
beforeAll(async () => {
  ts = await openTestStore('sqlite');
});
afterAll(() => ts?.cleanup());

const ids = (from: number, to: number): Id[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** A school holding students 1..n live. */
async function schoolWithStudents(n: number) {
  const school = stageSchool(newSchool());
  await ts.store.records.upsert(
    school.id,
    'students',
    ids(1, n).map((id) => student(id)),
    T0,
  );
  return school;
}

/** One resource's turn as pull-resource.ts takes it: detect, then apply, in one transaction. */
async function turn(
  school: ReturnType<typeof stageSchool>,
  kind: ResourceKind,
  got: Gathered,
  full = true,
  ctx?: ResourceRunContext,
) {
  ctx ??= (await stageContext(ts.store, school, { kinds: [kind] })).ctx;
  return ts.store.transaction(async (tx) => {
    const planned = await detectDeletions(tx, ctx, spec(kind), got, judgeListing(got, full), full);
    const deleted = await applyDeletions(tx, school.id, kind, planned, T1);
    return { planned, deleted };
  });
}

const live = async (schoolId: string, kind: ResourceKind) => ts.store.records.liveIds(schoolId, kind);
const marked = async (schoolId: string, kind: ResourceKind) => [
  ...(await ts.store.records.listMissing(schoolId, kind)).keys(),
];

describe('detecting deletions', () => {
  it('never deletes on a partial listing, nor marks anything', async () => {
    const school = await schoolWithStudents(10);
    const tally = { announced: 10, received: 5, repeated: 0, ids: new Set(ids(1, 5)) };
    const got = gathered(ids(1, 5), { tallies: [{ label: 'students', tally }] });
    const { planned, deleted } = await turn(school, 'students', got);
    expect(planned).toMatchObject({ remove: [], marks: null, pending: 0, guarded: true });
    expect(planned.warning).toMatch(/^students: the students listing is incomplete: .*; deleted nothing$/);
    expect(deleted).toBe(0);
    expect(await live(school.id, 'students')).toEqual(ids(1, 10));
    expect(await marked(school.id, 'students')).toEqual([]);
    // Nor does one with malformed records whose id is unknown, complete as it looks.
    const unknown = await turn(school, 'students', gathered(ids(1, 9), { unknownSkipped: 1 }));
    expect(unknown.planned).toMatchObject({ remove: [], marks: null, guarded: true });
    expect(await marked(school.id, 'students')).toEqual([]);
  });

  it('marks a record a complete listing leaves out once, and deletes it only when the next confirms it', async () => {
    const school = await schoolWithStudents(10);
    const first = await turn(school, 'students', gathered(ids(1, 9)));
    expect(first.planned).toMatchObject({
      remove: [],
      marks: [10],
      pending: 1,
      guarded: false,
      warning: null,
    });
    expect(first.deleted).toBe(0);
    expect(await live(school.id, 'students')).toEqual(ids(1, 10));
    expect(await marked(school.id, 'students')).toEqual([10]);

    const second = await turn(school, 'students', gathered(ids(1, 9)));
    expect(second.planned).toMatchObject({ remove: [10], pending: 0, guarded: false });
    expect(second.deleted).toBe(1);
    expect(await live(school.id, 'students')).toEqual(ids(1, 9));
    expect(await marked(school.id, 'students')).toEqual([]);
  });

  it('decides on the marks as the run read them at its start, not again in its transaction', async () => {
    const school = await schoolWithStudents(10);
    await turn(school, 'students', gathered(ids(1, 9)));
    const { ctx } = await stageContext(ts.store, school, { kinds: ['students'] });
    expect([...ctx.marks.get('students')!.keys()]).toEqual([10]);
    // Written here outside any lease: a pull's own can only be the lease holder's, whose run this is, or one that
    // lost the lease and whose writes are refused (test/sync/stale-marks.test.ts plays both with real pulls).
    await ts.store.records.setMissing(school.id, 'students', [], T1);
    const { planned, deleted } = await turn(school, 'students', gathered(ids(1, 9)), true, ctx);
    expect(planned).toMatchObject({ remove: [10], pending: 0 });
    expect(deleted).toBe(1);
    expect(await live(school.id, 'students')).toEqual(ids(1, 9));
  });

  it('drops the mark of a record seen again, on a full listing or an incremental one', async () => {
    const school = await schoolWithStudents(10);
    await turn(school, 'students', gathered(ids(1, 9)));
    expect(await marked(school.id, 'students')).toEqual([10]);
    const back = await turn(school, 'students', gathered(ids(1, 10)));
    expect(back.planned).toMatchObject({ remove: [], marks: [], pending: 0 });
    expect(await marked(school.id, 'students')).toEqual([]);
    // Missing once more is a first time again: kept.
    expect((await turn(school, 'students', gathered(ids(1, 9)))).deleted).toBe(0);
    await turn(school, 'students', gathered([10]), false);
    expect(await marked(school.id, 'students')).toEqual([]);
    expect((await turn(school, 'students', gathered(ids(1, 9)))).deleted).toBe(0);
    expect(await live(school.id, 'students')).toEqual(ids(1, 10));
  });

  it("deletes at once on a single read's 404, and keeps what the upstream still has, saying so", async () => {
    const school = stageSchool(newSchool());
    await ts.store.records.upsert(
      school.id,
      'teams',
      ids(1, 10).map((id) => team(id, [])),
      T0,
    );
    const confirmations = new Map<Id, Confirmation>([
      [9, 'gone'],
      [10, 'present'],
    ]);
    const { planned, deleted } = await turn(school, 'teams', gathered(ids(1, 8), { confirmations }));
    expect(planned).toMatchObject({ remove: [9], pending: 0, guarded: false });
    expect(planned.warning).toBe(
      'teams: the full listing left out 1 record the upstream still has (read singly: 10); kept',
    );
    expect(deleted).toBe(1);
    expect(await live(school.id, 'teams')).toEqual([...ids(1, 8), 10]);
    expect(await marked(school.id, 'teams')).toEqual([]);
  });

  it('holds back a listing shrunk past the guard: nothing deleted or marked, the turn guarded', async () => {
    const school = await schoolWithStudents(10);
    const { planned, deleted } = await turn(school, 'students', gathered(ids(1, 5)));
    expect(planned).toMatchObject({ remove: [], marks: null, guarded: true });
    expect(planned.warning).toEqual(expect.any(String));
    expect(deleted).toBe(0);
    expect(await marked(school.id, 'students')).toEqual([]);
  });

  it('deletes nothing on an incremental listing, and warns only of its problems', async () => {
    const school = await schoolWithStudents(10);
    const quiet = await turn(school, 'students', gathered([1]), false);
    expect(quiet).toEqual({
      planned: { remove: [], marks: null, pending: 0, guarded: false, warning: null },
      deleted: 0,
    });
    const tally = { announced: 3, received: 1, repeated: 0, ids: new Set([1]) };
    const short = await turn(
      school,
      'students',
      gathered([1], { tallies: [{ label: 'students', tally }] }),
      false,
    );
    expect(short.planned.warning).toMatch(/incomplete.*; will read these changes again$/);
    expect(await live(school.id, 'students')).toEqual(ids(1, 10));
  });
});
