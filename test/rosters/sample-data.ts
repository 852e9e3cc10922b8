// Hand-built roster data: students named in every script a roster must print, for unit tests and the benchmark.
// The pipeline tests (sandbox -> pull -> store) use the generated school instead.
import type { PreExplainedAbsence, Session, Team, TeamMember } from '../../src/domain/types.ts';
import type { RosterData } from '../../src/rosters/sheet.ts';

/** [first, last] per script; the tests look for each of them in the PDF text. */
export const multiScriptNames: { script: string; first: string; last: string }[] = [
  { script: 'latin-diacritics', first: 'Zoë', last: 'Ångström-Øre' },
  { script: 'latin-diacritics', first: 'Łukasz', last: 'Żółć' },
  { script: 'vietnamese', first: 'Nguyễn', last: 'Thị Minh Khai' },
  { script: 'vietnamese', first: 'Trần', last: 'Quốc Bảo' },
  { script: 'cyrillic', first: 'Дмитрий', last: 'Иванов' },
  { script: 'greek', first: 'Αλέξανδρος', last: 'Παπαδόπουλος' },
  { script: 'chinese', first: '小明', last: '王' },
  { script: 'chinese', first: '伟', last: '张' },
  { script: 'arabic', first: 'فاطمة', last: 'الزهراء' },
  { script: 'arabic', first: 'محمد', last: 'العلي' },
  { script: 'hebrew', first: 'נועה', last: 'כהן' },
  { script: 'devanagari', first: 'अनन्या', last: 'शर्मा' },
  { script: 'thai', first: 'ณัฐวุฒิ', last: 'วงศ์สวัสดิ์' },
  { script: 'japanese', first: 'さくら', last: '渡辺' },
  { script: 'korean', first: '민준', last: '김' },
];

const latinFirst = [
  'Olivia',
  'Noah',
  'Amelia',
  'Jack',
  'Isla',
  'Oliver',
  'Mia',
  'Leo',
  'Ava',
  'Henry',
  'Grace',
];
const latinLast = [
  'Smith',
  'Jones',
  'Williams',
  'Brown',
  'Taylor',
  'Wilson',
  'Martin',
  'Anderson',
  'Thompson',
];

function member(i: number, first: string, last: string): TeamMember {
  return {
    studentId: 1000 + i,
    firstName: first,
    legalFirstName: i >= multiScriptNames.length && i % 7 === 3 ? `${first}ine` : null,
    lastName: last,
    smsId: `S${String(10000 + i)}`,
    yearGroup: { id: 7 + (i % 6), name: `Year ${7 + (i % 6)}` },
    boarder: i % 5 === 0,
    captain: i === 2,
    jerseyNumber: String(((i * 7) % 40) + 1),
    positionId: 1 + (i % 4),
    sortOrder: i % 3 === 0 ? null : i,
    medicalConditions: i % 6 === 1 ? ['Asthma (inhaler in bag)'] : [],
    guardians: [
      { name: `Parent of ${first}`, relationship: 'Mother', email: null, phone: `+61 400 000 ${100 + i}` },
    ],
  };
}

/** A team of `size` students; the first ones carry the multi-script names. */
export function sampleTeam(size: number, id = 501): Team {
  const students: TeamMember[] = [];
  for (let i = 0; i < size; i++) {
    const named = multiScriptNames[i];
    const first = named ? named.first : latinFirst[i % latinFirst.length]!;
    const last = named
      ? named.last
      : `${latinLast[i % latinLast.length]!}${i >= 99 ? '-Featherstonehaugh' : ''}`;
    students.push(member(i, first, last));
  }
  return {
    id,
    name: 'Senior Girls Football A',
    sisId: null,
    hidden: false,
    playersRanked: false,
    category: { id: 3, name: 'Senior', sortOrder: 1 },
    subcategory: { id: 9, name: 'Girls' },
    activity: { id: 40, name: 'Football', sisCode: null, department: { id: 2, name: 'Sport' } },
    staff: [
      { id: 70, firstName: 'Hannah', lastName: 'Okafor', sisId: null },
      { id: 71, firstName: 'Tomás', lastName: 'García', sisId: null },
    ],
    students,
    positions: [
      { id: 1, name: 'Goalkeeper', numberOfSlots: 1 },
      { id: 2, name: 'Defender', numberOfSlots: 4 },
      { id: 3, name: 'Midfielder', numberOfSlots: 4 },
      { id: 4, name: 'Forward', numberOfSlots: 2 },
    ],
    studentSortType: null,
  };
}

export function sampleFixture(team: Team): Session {
  return {
    id: 9001,
    title: 'Round 5 v Riverside College',
    notes: 'Bus leaves from the back gate.',
    studentParentNotes: '',
    opponent: 'Riverside College 1st XI',
    bye: false,
    cancelled: false,
    scored: true,
    hexColor: null,
    start: '2026-11-26T05:30:00.000Z',
    end: '2026-11-26T07:00:00.000Z',
    creatorUserId: null,
    seriesId: null,
    organisationScore: null,
    opponentScore: null,
    result: null,
    remindStaff: false,
    status: 'confirmed',
    optional: false,
    roundName: 'Round 5',
    activity: { id: team.activity.id, name: team.activity.name, department: null, hexColor: '#1f6feb' },
    location: {
      id: 12,
      name: 'Riverside Oval 2',
      address: '14 Riverbank Road, Riverside NSW 2000',
      latitude: -33.8,
      longitude: 151.2,
      owner: { id: 4, name: 'Riverside College', acronym: 'RC', shortName: 'Riverside' },
    },
    teams: [
      {
        id: team.id,
        name: team.name,
        category: null,
        subcategory: null,
        customFieldsData: { meetTime: '15:45' },
      },
    ],
    students: [],
    staff: [],
    customFieldsData: {},
  };
}

export function sampleAbsences(team: Team, session: Session): PreExplainedAbsence[] {
  const s = team.students;
  return [
    // Covers the session.
    {
      id: 1,
      studentId: s[1]!.studentId,
      start: '2026-11-26T00:00:00.000Z',
      end: '2026-11-27T00:00:00.000Z',
      explained: true,
      reason: 'Orthodontist appointment',
    },
    // Overlaps the first half hour only.
    {
      id: 2,
      studentId: s[4]!.studentId,
      start: session.start,
      end: '2026-11-26T06:00:00.000Z',
      explained: true,
      reason: 'Music exam',
    },
  ];
}

export function sampleData(size: number, withSession: boolean): RosterData {
  const team = sampleTeam(size);
  const session = withSession ? sampleFixture(team) : null;
  const absences = new Map<number, PreExplainedAbsence[]>();
  if (session) for (const a of sampleAbsences(team, session)) absences.set(a.studentId, [a]);
  return {
    school: { id: 'demo', name: 'St Aidan’s College', timeZone: 'Australia/Sydney' },
    team,
    session,
    absences,
    customFields: [
      {
        key: 'meetTime',
        label: 'Meeting time',
        dataType: 'time',
        showToUserTypes: ['staff', 'guardian'],
        showAfterField: null,
      },
    ],
    generatedAt: new Date('2026-11-22T22:30:00.000Z'),
  };
}
