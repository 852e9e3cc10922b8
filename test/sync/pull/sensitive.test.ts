// Sensitive rosters (sync/pull/sensitive.ts): the mark the store keeps beside the teams, and what a team keeps when
// the school does not print medical and guardian data.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchool } from '../../../src/config.ts';
import type { Team } from '../../../src/domain/types.ts';
import {
  SENSITIVE_KEY,
  sensitiveChanged,
  sensitiveMark,
  withoutSensitive,
} from '../../../src/sync/pull/sensitive.ts';
import { openTestStore, type TestStore } from '../helpers.ts';

const school = (sensitive: boolean) =>
  parseSchool({
    id: 'hill',
    name: 'Hill',
    upstream: { url: 'http://127.0.0.1:9', token: 't' },
    timeZone: 'UTC',
    rosters: { sensitive },
  });
let ts: TestStore;

beforeAll(async () => {
  ts = await openTestStore('sqlite');
  await ts.store.records.upsertSchool({ id: 'hill', name: 'Hill', timeZone: 'UTC' });
});
afterAll(() => ts?.cleanup());

describe('sensitive rosters', () => {
  it('count as changed until the store holds the school’s own mark', async () => {
    expect(sensitiveMark(school(true))).toBe('on');
    expect(sensitiveMark(school(false))).toBe('off');
    expect(await sensitiveChanged(ts.store, school(false))).toBe(true);
    await ts.store.records.setCursor('hill', SENSITIVE_KEY, 'off');
    expect(await sensitiveChanged(ts.store, school(false))).toBe(false);
    expect(await sensitiveChanged(ts.store, school(true))).toBe(true);
  });

  it('leave a team without medical conditions, guardians or absence marks, and the rest as it was', () => {
    const member = {
      id: 7,
      firstName: 'Ada',
      lastName: 'Lee',
      medicalConditions: [{ name: 'Asthma' }],
      guardians: [{ name: 'Sam Lee', phone: '0400 000 000' }],
      absentToday: true,
      absentReason: 'Dentist',
    };
    const team = { id: 1, name: 'Firsts', students: [member] } as unknown as Team;
    const kept = withoutSensitive(team);
    expect(kept).toEqual({
      id: 1,
      name: 'Firsts',
      students: [{ id: 7, firstName: 'Ada', lastName: 'Lee', medicalConditions: [], guardians: [] }],
    });
    // The stored team is a copy: the one read is not changed.
    expect(team.students[0]).toMatchObject({ absentToday: true, guardians: [{ name: 'Sam Lee' }] });
  });
});
