// Whom a school's calendars are of (store/calendar-subjects.ts), on SQLite and PostgreSQL: live teams, current
// students, live activities, each with its name, other names and the ids an admin may know; no deleted record, no
// student who left, no archived activity, nothing of another school.
import { expect, it } from 'vitest';
import { describeOnEachStore, newSchool, T0, T1 } from './each-store.ts';
import { activity, student, team } from './fixtures.ts';

describeOnEachStore('listCalendarSubjects (store.records)', (store) => {
  it('lists the live subjects with their names and known ids, and leaves out the gone', async () => {
    const s = newSchool();
    const r = store().records;
    await r.upsert(s, 'teams', [team(1, []), team(2, [])], T0);
    await r.upsert(
      s,
      'students',
      [
        student(7, { firstName: 'Sasha', legalFirstName: 'Alexandra', lastName: 'Ng', sisId: 'S-7' }),
        student(8, { firstName: 'Left', current: false }),
      ],
      T0,
    );
    await r.upsert(s, 'activities', [activity(3, 'Chess'), { ...activity(4, 'Gone'), archived: true }], T0);
    await r.markDeleted(s, 'teams', [2], T1);
    await r.upsert(newSchool(), 'teams', [team(9, [])], T0);

    const subjects = await r.listCalendarSubjects(s);
    expect(subjects.map((x) => `${x.scope}:${x.id}`).sort()).toEqual(['activity:3', 'student:7', 'team:1']);
    expect(subjects.find((x) => x.scope === 'student')).toEqual({
      scope: 'student',
      id: 7,
      name: 'Sasha Ng',
      otherNames: ['Alexandra Ng'],
      knownIds: ['S-7'],
    });
    expect(subjects.find((x) => x.scope === 'team')).toMatchObject({
      name: 'Team 1',
      otherNames: [],
      knownIds: [],
    });
  });
});
