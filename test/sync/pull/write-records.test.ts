// A resource's new and changed records written (sync/pull/write-records.ts), in a real SQLite store: every record
// of the download lands, however many chunks it takes; the counts say what was added (a deleted record back
// counts as added), changed and unchanged (those the download only counted), with the listing's skips; custom
// fields that came with sessions are stored as their own kind and counted apart.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CustomFieldMeta, Student } from '../../../src/domain/types.ts';
import { prepareRecord } from '../../../src/store/kinds.ts';
import { writeRecords } from '../../../src/sync/pull/write-records.ts';
import { newSchool, T0, T1, T2 } from '../../store/each-store.ts';
import { customField, session, student } from '../../store/fixtures.ts';
import { openTestStore, type TestStore } from '../helpers.ts';
import { gathered, spec, stageSchool } from './stage-context.ts';

let ts: TestStore;
beforeAll(async () => {
  ts = await openTestStore('sqlite');
});
afterAll(() => ts?.cleanup());

/** A download carrying these students as new or changed, and `unchanged` more it only counted. */
async function withStudents(records: Student[], unchanged = 0) {
  const got = gathered([], { unchanged });
  await got.records.add(records.map((r) => prepareRecord('students', r)));
  return got;
}

describe("writing a resource's records", () => {
  it('adds, changes and restores, counting what came unchanged and what the listing skipped', async () => {
    const school = stageSchool(newSchool());
    await ts.store.records.upsert(
      school.id,
      'students',
      [1, 2, 3].map((id) => student(id)),
      T0,
    );
    await ts.store.records.markDeleted(school.id, 'students', [3], T0);
    const got = await withStudents([student(2, { firstName: 'Renamed' }), student(3), student(4)], 1);
    const written = await ts.store.transaction((tx) =>
      writeRecords(tx, school, spec('students'), got, { skipped: 2, at: T1 }),
    );
    expect(written).toEqual({ counts: { added: 2, changed: 1, deleted: 0, unchanged: 1, skipped: 2 } });
    expect(await ts.store.records.liveIds(school.id, 'students')).toEqual([1, 2, 3, 4]);
    expect((await ts.store.records.get(school.id, 'students', 2))!.firstName).toBe('Renamed');
    await got.records.close();
  });

  it('writes every record of a download larger than one chunk', async () => {
    const school = stageSchool(newSchool());
    const ids = Array.from({ length: 4_500 }, (_, i) => i + 1);
    const got = await withStudents(ids.map((id) => student(id)));
    const written = await ts.store.transaction((tx) =>
      writeRecords(tx, school, spec('students'), got, { skipped: 0, at: T1 }),
    );
    expect(written.counts).toMatchObject({ added: 4_500, changed: 0, unchanged: 0 });
    expect(await ts.store.records.liveIds(school.id, 'students')).toEqual(ids);
    await got.records.close();
  });

  it('stores the custom fields that came with sessions as their own kind, counted apart', async () => {
    const school = stageSchool(newSchool());
    const fields = (label: string) =>
      new Map<string, CustomFieldMeta>([['allergy', customField('allergy', label)]]);
    const first = gathered([], { customFields: fields('Allergy'), customFieldsUnchanged: 2 });
    await first.records.add([prepareRecord('sessions', session(1))]);
    const written = await ts.store.transaction((tx) =>
      writeRecords(tx, school, spec('sessions'), first, { skipped: 0, at: T1 }),
    );
    expect(written).toEqual({
      counts: { added: 1, changed: 0, deleted: 0, unchanged: 0, skipped: 0 },
      extra: { kind: 'customFields', counts: { added: 1, changed: 0, deleted: 0, unchanged: 2, skipped: 0 } },
    });
    const relabelled = gathered([], { customFields: fields('Allergies') });
    const again = await writeRecords(ts.store, school, spec('sessions'), relabelled, { skipped: 0, at: T2 });
    expect(again.extra!.counts).toMatchObject({ added: 0, changed: 1, unchanged: 0 });
    expect((await ts.store.records.get(school.id, 'customFields', 'allergy'))!.label).toBe('Allergies');
    // Only unchanged ones still say so; none at all leave no extra.
    const same = await writeRecords(
      ts.store,
      school,
      spec('sessions'),
      gathered([], { customFieldsUnchanged: 1 }),
      {
        skipped: 0,
        at: T2,
      },
    );
    expect(same.extra!.counts).toMatchObject({ added: 0, changed: 0, unchanged: 1 });
    expect(
      await writeRecords(ts.store, school, spec('sessions'), gathered([]), { skipped: 0, at: T2 }),
    ).toEqual({
      counts: { added: 0, changed: 0, deleted: 0, unchanged: 0, skipped: 0 },
    });
    await first.records.close();
  });
});
