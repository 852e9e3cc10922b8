// The sandbox's wire shapes (src/sandbox/wire.ts), read over HTTP as the client reads them, against the spec's
// resource tables: which fields a list item has and which only the single record has, timestamps in UTC, the
// quirks the spec shows (organisationScore a string, opponentScore a number, absences' startDate as
// `YYYY-MM-DD HH:mm:ss` and endDate with milliseconds), and a membership's null ends. Filters and includes:
// filters.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { all, call, get, type Json } from './helpers.ts';

const NOW = '2026-03-02T01:00:00.000Z';
const YEAR = { startDateTime: '2025-09-01T00:00:00Z', endDateTime: '2026-08-31T00:00:00Z' };
const UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
let sb: Sandbox;

beforeAll(async () => {
  sb = await startSandbox({ seed: 5, now: NOW });
});
afterAll(async () => {
  await sb.close();
});

const one = async (path: string) => {
  const r = await call(sb, 'GET', path);
  expect(r.status, path).toBe(200);
  return r.json.data as Json;
};

describe('session', () => {
  const LIST_FIELDS = [
    'id',
    'title',
    'notes',
    'studentParentNotes',
    'opponent',
    'bye',
    'cancelled',
    'scored',
    'hexColor',
    'startDateTime',
    'endDateTime',
    'creatorUserId',
    'seriesId',
    'organisationScore',
    'opponentScore',
    'result',
    'remindStaff',
    'status',
    'activity',
    'locationData',
  ];
  const SINGLE_ONLY = [
    'opponentTeam',
    'opponentOrganisation',
    'displayScore',
    'resultNotes',
    'customFieldsData',
    'optional',
  ];

  it('a list item has the list fields and feedback, none of the single-session fields; times in UTC', async () => {
    const { data } = await get(sb, '/sessions', { pageLength: 20 });
    for (const s of data) {
      expect(Object.keys(s).sort()).toEqual([...LIST_FIELDS, 'feedback'].sort());
      expect(s.startDateTime).toMatch(UTC);
      expect(s.endDateTime).toMatch(UTC);
      expect(Object.keys(s.activity as Json).sort()).toEqual([
        'colour',
        'department',
        'hexColor',
        'id',
        'name',
      ]);
    }
  });

  it('the single session adds its own fields, drops feedback and the activity colour, shows sub-locations', async () => {
    const located = sb.school.sessions.find((s) => s.locationId !== null)!;
    const s = await one(`/sessions/${located.id}`);
    expect(Object.keys(s).sort()).toEqual([...LIST_FIELDS, ...SINGLE_ONLY].sort());
    expect(s.activity).not.toHaveProperty('colour');
    expect(s.locationData).toHaveProperty('subLocations');
    const listed = (await get(sb, '/sessions', { ...YEAR, pageLength: 1000 })).data.find(
      (x) => x.id === located.id,
    );
    expect(listed?.locationData).not.toHaveProperty('subLocations');
  });

  it('scores: organisationScore a string, opponentScore a number, displayScore "a - b"; all null without a result', async () => {
    const scoredId = sb.school.sessions.find(
      (s) => s.organisationScore !== null && s.opponentScore !== null,
    )!.id;
    const scored = await one(`/sessions/${scoredId}`);
    expect(scored.organisationScore).toBeTypeOf('string');
    expect(scored.opponentScore).toBeTypeOf('number');
    expect(scored.displayScore).toBe(`${scored.organisationScore} - ${scored.opponentScore}`);
    const plainId = sb.school.sessions.find((s) => !s.scored)!.id;
    const plain = await one(`/sessions/${plainId}`);
    expect([plain.organisationScore, plain.opponentScore, plain.result, plain.displayScore]).toEqual([
      null,
      null,
      null,
      null,
    ]);
  });

  it('roundName only for a Fixture, and only when asked', async () => {
    const asked = await all(sb, '/sessions', { ...YEAR, pageLength: 1000, includeRoundName: true });
    expect(asked.some((s) => s.scored && 'roundName' in s)).toBe(true);
    expect(asked.filter((s) => !s.scored).every((s) => !('roundName' in s))).toBe(true);
    const bare = await get(sb, '/sessions', { ...YEAR, scored: true, pageLength: 50 });
    expect(bare.data.every((s) => !('roundName' in s))).toBe(true);
  });
});

describe('team', () => {
  it("list members are the spec's list fields; the single team's member is the same with its sheet", async () => {
    const { data } = await get(sb, '/teams', { includeStudents: true, pageLength: 5 });
    const listed = data.find((t) => (t.students as Json[]).length > 0)!;
    const member = (listed.students as Json[])[0]!;
    for (const k of [
      'studentId',
      'firstName',
      'legalFirstName',
      'lastName',
      'smsId',
      'yearGroup',
      'boarder',
      'captain',
      'jerseyNumber',
    ])
      expect(member).toHaveProperty(k);
    for (const k of ['id', 'guardians', 'medicalConditions', 'absentToday'])
      expect(member).not.toHaveProperty(k);
    expect(listed).not.toHaveProperty('studentSortType');
    expect(listed.activity).not.toHaveProperty('accessRights');

    // The single team's member is the list's member with its sheet added (detail: filters.test.ts).
    const single = await one(`/teams/${listed.id}`);
    const sheet = (single.students as Json[]).find((x) => x.studentId === member.studentId);
    expect(sheet).toMatchObject(member);
    expect(sheet?.id).toBe(member.studentId);
  });
});

describe('student team and pre-explained absence', () => {
  it('a membership names its student by full name and SIS id; a current one has a null end', async () => {
    const data = await all(sb, '/student-teams', { pageLength: 300 });
    const m = data[0]!;
    const p = sb.school.students.find((s) => s.id === (m.student as Json).id)!;
    expect(m.student).toEqual({ id: p.id, fullName: `${p.firstName} ${p.lastName}`, smsId: p.sisId });
    expect(Object.keys(m.team as Json).sort()).toEqual(['activity', 'id', 'name', 'sisId']);
    expect(data.some((x) => x.endDateTime === null)).toBe(true);
    expect(data.some((x) => typeof x.endDateTime === 'string' && UTC.test(x.endDateTime))).toBe(true);
  });

  it('an absence starts as YYYY-MM-DD HH:mm:ss and ends with milliseconds, both UTC', async () => {
    const { data } = await get(sb, '/pre-explained-absences', { pageLength: 20 });
    expect(data.length).toBeGreaterThan(0);
    for (const a of data) {
      expect(Object.keys(a).sort()).toEqual([
        'endDate',
        'explained',
        'id',
        'reason',
        'startDate',
        'studentId',
      ]);
      expect(a.startDate).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
      expect(a.endDate).toMatch(UTC);
      const own = sb.school.absences.find((x) => x.id === a.id)!;
      expect(Date.parse(`${(a.startDate as string).replace(' ', 'T')}Z`)).toBe(
        Math.floor(own.start / 1000) * 1000,
      );
      expect(Date.parse(a.endDate as string)).toBe(own.end);
    }
  });
});
