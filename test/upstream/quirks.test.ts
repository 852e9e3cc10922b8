// Hand-written responses carrying every quirk real responses have shown, read through the real client over HTTP
// and checked field by field against the clean domain types.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MalformedRecord, Page } from '../../src/upstream/api.ts';
import { createUpstreamClient, SESSIONS_PAGE_LENGTH } from '../../src/upstream/client.ts';
import { type FixtureServer, fixture, type SeenRequest, startFixtureServer } from './fixture-server.ts';

const misc = fixture('misc.json') as Record<string, unknown>;

function route(req: SeenRequest) {
  const p = req.path;
  if (p === '/sessions')
    return { body: fixture(req.query.get('page') === '2' ? 'sessions-page2.json' : 'sessions-page1.json') };
  if (p === '/sessions/101') return { body: fixture('session-single.json') };
  if (p === '/teams/40') return { body: fixture('team-single.json') };
  if (p === '/teams') return { body: fixture('teams.json') };
  if (p === '/users') return { body: fixture('users.json') };
  if (p === '/student-teams') return { body: fixture('student-teams.json') };
  if (p === '/pre-explained-absences') return { body: fixture('absences.json') };
  const key = p.slice(1);
  if (key in misc) return { body: misc[key] };
  return { status: 404, body: { message: 'no such fixture' } };
}

let server: FixtureServer;
const malformed: MalformedRecord[] = [];
const client = () =>
  createUpstreamClient({
    baseUrl: server.url,
    token: 'fixture-token',
    rateLimit: { requestsPerSecond: 1000, concurrency: 4 },
    onMalformed: (m) => malformed.push(m),
  });

async function all<T>(it: AsyncIterable<Page<T>>): Promise<Page<T>[]> {
  const pages: Page<T>[] = [];
  for await (const p of it) pages.push(p);
  return pages;
}

beforeAll(async () => {
  server = await startFixtureServer(route);
});
afterAll(() => server.close());

describe('sessions with quirks', () => {
  it('pages through paginationData/pagination, keeps good records, reports bad ones', async () => {
    malformed.length = 0;
    server.requests.length = 0;
    const pages = await all(
      client().sessions({ activityIds: [3, 5], includeTeams: true, includeStaff: true }),
    );
    expect(pages).toHaveLength(2);
    const [p1, p2] = pages as [
      Page<import('../../src/domain/types.ts').Session>,
      Page<import('../../src/domain/types.ts').Session>,
    ];

    // Paging: the client's sessions page length by default, arrays as stringified JSON, following lastPage.
    expect(server.requests.map((r) => r.query.get('page'))).toEqual(['1', '2']);
    expect(server.requests[0]?.query.get('pageLength')).toBe(String(SESSIONS_PAGE_LENGTH));
    expect(server.requests[0]?.query.get('activityIds')).toBe('[3,5]');
    expect(server.requests[0]?.query.get('includeTeams')).toBe('true');
    expect(p1.currentPage).toBe(1);
    expect(p1.lastPage).toBe(2);
    expect(p1.numRecords).toBe(7);
    expect(p2.numRecords).toBe(7);

    expect(p1.records.map((s) => s.id)).toEqual([101, 102, 104]);
    expect(p1.skipped).toEqual([
      {
        endpoint: 'GET /sessions',
        id: 'weird',
        reason: expect.stringContaining('customFieldsMetadata: dataType'),
      },
      { endpoint: 'GET /sessions', id: '103', reason: expect.stringContaining('startDateTime') },
    ]);
    expect(p2.records.map((s) => [s.id, s.result])).toEqual([
      [105, 'draw'],
      [106, 'forfeit'],
      [107, 'opponent-forfeit'],
      [108, 'no-result'],
    ]);
    expect(p2.skipped).toEqual([
      { endpoint: 'GET /sessions', id: '109', reason: 'result: unknown result code' },
      { endpoint: 'GET /sessions', id: null, reason: expect.stringMatching(/^id: .*\(\+1 more\)$/) },
    ]);
    expect(malformed).toEqual([...p1.skipped, ...p2.skipped]);

    expect(p1.customFieldsMetadata).toEqual([
      {
        key: 'coach',
        label: 'Coach on duty',
        dataType: 'staff',
        showToUserTypes: ['admin', 'staff'],
        showAfterField: null,
      },
      {
        key: 'meet',
        label: 'Meeting time',
        dataType: 'time',
        showToUserTypes: ['admin', 'staff', 'guardian', 'student'],
        showAfterField: 'coach',
      },
      // "parent" is no audience rostercal knows: dropped, so the field is shown to fewer, never more.
      {
        key: 'kit',
        label: 'Kit',
        dataType: 'single-select',
        showToUserTypes: ['guardian'],
        showAfterField: 'meet',
      },
    ]);
    expect(p2.customFieldsMetadata).toBeUndefined();

    expect(p1.records[0]).toEqual({
      id: 101,
      title: 'U14 Netball v Riverside',
      notes: 'Bus leaves 7:45',
      studentParentNotes: 'Bring water',
      opponent: 'Riverside College',
      bye: false,
      cancelled: false,
      scored: true,
      hexColor: '#ff8800',
      start: '2026-03-14T09:00:00.000Z',
      end: '2026-03-14T10:30:00.000Z',
      creatorUserId: 7,
      seriesId: 55,
      organisationScore: '21',
      opponentScore: '17',
      result: 'win',
      remindStaff: true,
      status: 'confirmed',
      optional: false,
      roundName: null,
      activity: { id: 3, name: 'Netball', department: { id: 2, name: 'Sport' }, hexColor: '#ff8800' },
      location: {
        id: 8,
        name: 'Court 2',
        address: '1 School Rd',
        latitude: -33.8688,
        longitude: 151.2093,
        owner: { id: 1, name: 'Our School', acronym: 'OS', shortName: null },
      },
      teams: [
        {
          id: 40,
          name: 'U14 Netball A',
          category: { id: 4, name: 'Junior', sortOrder: 2 },
          subcategory: null,
          customFieldsData: { coach: [12, 13], meet: '07:45', kit: 'Home' },
        },
      ],
      // Who is listed, nothing more: names and SIS ids are the students listing's (domain/types.ts).
      students: [{ id: 900 }],
      staff: [{ id: 12, firstName: 'Ana', lastName: 'Kovač', sisId: '9001', externalId: null }],
      customFieldsData: {},
    });

    const s102 = p1.records[1]!;
    expect(s102.start).toBe('2026-03-15T15:30:00.000Z'); // no zone: UTC, not the machine's local time
    expect(s102.end).toBe('2026-03-15T07:00:00.000Z'); // +10:00 converted
    expect(s102).toMatchObject({
      cancelled: true,
      status: 'draft',
      location: null,
      teams: [],
      students: [],
      staff: [],
      seriesId: null,
      result: null,
      opponent: null,
      organisationScore: null,
      activity: { id: 5, name: 'Orchestra', department: null, hexColor: null },
    });
    const s104 = p1.records[2]!;
    expect(s104).toMatchObject({
      organisationScore: '0',
      opponentScore: '3',
      result: 'loss',
      status: 'unconfirmed',
    });
    expect(p2.records[1]!.bye).toBe(false);
  });

  it('reads a single session with session-level custom fields and metadata', async () => {
    const { session, customFieldsMetadata } = await client().session(101, {
      includeCustomFieldsMetadata: true,
    });
    expect(session.customFieldsData).toEqual({ coach: [12, 13], meet: '07:45', helpers: [900, 901] });
    expect(customFieldsMetadata?.map((f) => f.key)).toEqual(['coach', 'meet', 'helpers']);
    expect(session).toMatchObject({
      result: 'win',
      optional: true,
      roundName: 'Round 4',
      location: { id: 8, name: 'Court 2', address: null, latitude: null, longitude: null, owner: null },
    });
    expect(server.requests.at(-1)?.query.get('includeCustomFieldsMetadata')).toBe('true');
  });
});

describe('other resources with quirks', () => {
  it('users: frozen as yes/no or boolean, ids and sisIds either way round', async () => {
    malformed.length = 0;
    const [page] = await all(client().users({ frozen: false, permissionTypes: [0, 1] }));
    expect(server.requests.at(-1)?.query.get('permissionTypes')).toBe('[0,1]');
    expect(server.requests.at(-1)?.query.get('pageLength')).toBe('200');
    expect(page!.records.map((u) => [u.id, u.frozen])).toEqual([
      [12, false],
      [13, true],
      [14, true],
      [15, false],
    ]);
    expect(page!.records[0]).toEqual({
      id: 12,
      firstName: 'Ana',
      lastName: 'Kovač',
      email: 'ana@school.example',
      mobileNumber: null,
      isAdmin: false,
      isManager: true,
      frozen: false,
      sisId: null,
      externalId: 'EXT-12',
      secondaryExternalId: null,
      activityIds: [3],
      departmentIds: [2],
    });
    expect(page!.records[1]!.sisId).toBe('4455');
    expect(page!.skipped).toEqual([
      { endpoint: 'GET /users', id: '16', reason: expect.stringContaining('frozen') },
      { endpoint: 'GET /users', id: '17', reason: expect.stringContaining('email') },
    ]);
    expect(malformed).toHaveLength(2);
  });

  it('student-teams without a pagination object: one page, the whole listing', async () => {
    const before = server.requests.length;
    const pages = await all(client().studentTeams({ studentIds: [900, 901] }));
    expect(server.requests.length - before).toBe(1);
    expect(server.requests.at(-1)?.query.get('studentIds')).toBe('[900,901]');
    expect(server.requests.at(-1)?.query.get('pageLength')).toBe('300');
    expect(pages).toHaveLength(1);
    expect(pages[0]).toMatchObject({ currentPage: 1, lastPage: 1, numRecords: 2, skipped: [] });
    expect(pages[0]!.records).toEqual([
      { id: 1, studentId: 900, teamId: 40, start: '2026-02-01T00:00:00.000Z', end: null },
      { id: 2, studentId: 901, teamId: 40, start: null, end: '2026-03-01T12:00:00.000Z' },
    ]);
  });

  it('pre-explained absences: zone-less start and millisecond end both read as UTC', async () => {
    const [page] = await all(client().preExplainedAbsences({ explained: true }));
    expect(page!.numRecords).toBe(3);
    expect(page!.records).toEqual([
      {
        id: 1,
        studentId: 900,
        start: '2026-03-14T08:00:00.000Z',
        end: '2026-03-14T15:30:00.000Z',
        explained: true,
        reason: 'Dentist',
      },
      {
        id: 2,
        studentId: 901,
        start: '2026-03-20T00:00:00.000Z',
        end: '2026-03-21T23:59:59.999Z',
        explained: false,
        reason: '',
      },
    ]);
    expect(page!.skipped).toEqual([
      { endpoint: 'GET /pre-explained-absences', id: '3', reason: expect.stringContaining('startDate') },
    ]);
  });

  it('a single team: members, positions, medical conditions and guardians', async () => {
    const team = await client().team(40, { showAsOfDate: '2026-03-01T00:00:00Z' });
    expect(server.requests.at(-1)?.query.get('showAsOfDate')).toBe('2026-03-01T00:00:00Z');
    expect(team).toMatchObject({
      id: 40,
      sisId: 'NB14A',
      playersRanked: true,
      category: { id: 4, name: 'Junior', sortOrder: null },
      subcategory: null,
      activity: { id: 3, name: 'Netball', sisCode: '77', department: { id: 2, name: 'Sport' } },
      staff: [{ id: 12, firstName: 'Ana', lastName: 'Kovač', sisId: null }],
      positions: [
        { id: 1, name: 'Centre', numberOfSlots: 1 },
        { id: 2, name: 'Goal Shooter', numberOfSlots: 1 },
      ],
      studentSortType: 'alphabetical',
    });
    expect(team.students[0]).toEqual({
      studentId: 900,
      firstName: 'Lan',
      legalFirstName: 'Thị Lan',
      lastName: 'Nguyễn',
      smsId: '12345',
      yearGroup: { id: 9, name: 'Year 9' },
      boarder: false,
      captain: true,
      jerseyNumber: '7',
      positionId: 1,
      sortOrder: 1,
      medicalConditions: ['Asthma', 'Peanut allergy: EpiPen in bag'],
      guardians: [
        { name: 'Minh Nguyễn', relationship: 'Mother', email: 'minh@example.com', phone: '0400 000 000' },
      ],
    });
    expect(team.students[1]).toMatchObject({
      studentId: 901,
      boarder: true,
      jerseyNumber: '12',
      legalFirstName: null,
    });
  });

  it('teams: paginationData with string numbers; a member without id or a team without activity is skipped', async () => {
    const [page] = await all(client().teams({ departmentIds: [2], hidden: true }));
    expect(server.requests.at(-1)?.query.get('pageLength')).toBe('50');
    expect(server.requests.at(-1)?.query.get('hidden')).toBe('true');
    expect(page).toMatchObject({ currentPage: 1, lastPage: 1, numRecords: 3 });
    expect(page!.records.map((t) => t.id)).toEqual([40]);
    expect(page!.records[0]).toMatchObject({ staff: [], students: [], positions: [], category: null });
    expect(page!.skipped.map((s) => [s.id, s.reason.split(':')[0]])).toEqual([
      ['41', 'students.0'],
      ['42', 'activity'],
    ]);
  });

  it('students, attendance, incidents, locations, departments, year groups, activities, selections', async () => {
    const c = client();
    const first = async <T>(it: AsyncIterable<Page<T>>) => {
      const pages = await all(it);
      expect(pages).toHaveLength(1);
      expect(pages[0]!.skipped).toEqual([]);
      return pages[0]!.records;
    };
    expect(await first(c.students({ sisIds: ['12345', 'S902'] }))).toEqual([
      {
        id: 900,
        firstName: 'Lan',
        legalFirstName: 'Thị Lan',
        lastName: 'Nguyễn',
        sisId: '12345',
        secondarySisId: null,
        yearGroupId: 9,
        current: true,
      },
      {
        id: 902,
        firstName: 'Fatima',
        legalFirstName: null,
        lastName: 'الزهراء',
        sisId: 'S902',
        secondarySisId: 'X902',
        yearGroupId: null,
        current: true,
      },
    ]);
    expect(server.requests.at(-1)?.query.get('sisIds')).toBe('["12345","S902"]');
    expect((await first(c.students({ current: false }))).every((s) => s.current === false)).toBe(true);
    expect(server.requests.at(-1)?.query.get('current')).toBe('false');

    expect(await first(c.attendanceRecords({ timePeriod: 'last-week', absent: true }))).toEqual([
      {
        id: 1,
        absent: true,
        explained: false,
        comment: null,
        addedToRoll: false,
        studentId: 900,
        sessionId: 101,
        teamId: null,
        updatedTimestamp: '2026-03-14T10:00:00.000Z',
      },
    ]);
    expect(server.requests.at(-1)?.query.get('pageLength')).toBe('300');
    expect(await first(c.incidents({ concussionStatus: 'potential' }))).toEqual([
      {
        id: 1,
        location: 'Court 2',
        studentId: 900,
        dateTime: '2026-03-14T09:30:00.000Z',
        concussionStatus: 'potential',
        activityId: 3,
        sessionId: 101,
        archived: false,
      },
    ]);
    expect(await first(c.locations({ archived: false }))).toEqual([
      { id: 8, name: 'Court 2', address: null, latitude: -33.5, longitude: null, archived: false },
    ]);
    expect(await first(c.departments())).toEqual([{ id: 2, name: 'Sport' }]);
    expect(await first(c.yearGroups())).toEqual([{ id: 9, name: 'Year 9', archived: false }]);
    expect(await first(c.activities({ departmentIds: [2] }))).toEqual([
      {
        id: 3,
        name: 'Netball',
        code: 'NB01',
        emoji: '🏐',
        archived: false,
        hexColor: '#ff8800',
        smsCode: 'NB',
        activityType: 'sport',
        rollMode: 'absent',
        department: { id: 2, name: 'Sport' },
      },
    ]);
    expect(
      await first(
        c.activitySelections({ invoiceStatus: ['paid', 'unpaid'], seasonActivityOptionIds: ['17'] }),
      ),
    ).toEqual([
      {
        id: 1,
        selectedTimestamp: '2026-01-10T08:00:00.000Z',
        selectedByGuardianId: null,
        onWaitlist: false,
        activityId: 3,
        seasonId: 2,
        studentId: 900,
        invoiceStatus: 'paid',
      },
    ]);
    expect(server.requests.at(-1)?.query.get('invoiceStatus')).toBe('["paid","unpaid"]');
    expect(server.requests.at(-1)?.query.get('seasonActivityOptionIds')).toBe('["17"]');
  });
});
