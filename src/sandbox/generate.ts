// Generates a deterministic, realistic school for a (seed, scale, now): the same inputs give the same school.
// Everything random comes from the seeded Rng; nothing reads the real clock.

import { hourMinute, offsetMinutes, wallToUtc } from '../util/time-zone.ts';
import {
  ABSENCE_REASONS,
  ACTIVITIES,
  type ActivitySpec,
  DEPARTMENTS,
  HOME_VENUES,
  OPPONENT_SCHOOLS,
  oneOffsFor,
  parentNotesFor,
  staffNotesFor,
  uniformsFor,
  venuesFor,
} from './catalogue.ts';
import type {
  CustomFieldValue,
  Organisation,
  SAbsence,
  SActivity,
  SActivitySelection,
  SAttendanceRecord,
  SCategory,
  SCustomField,
  Scale,
  School,
  SIncident,
  SLocation,
  SMembership,
  SSeason,
  SSession,
  SStudent,
  STeam,
  SUser,
  SYearGroup,
} from './model.ts';
import {
  asciiSlug,
  GUARDIAN_RELATIONSHIPS,
  givenNameFor,
  givenNameGender,
  MEDICAL_CONDITIONS,
  personName,
} from './names.ts';
import { Rng } from './prng.ts';
import { dayOff } from './school-calendar.ts';
import { DAY, HOUR, MINUTE } from './time.ts';

export const SCHOOL_TIME_ZONE = 'Australia/Sydney';

interface ScaleSpec {
  activities: number;
  teams: number;
  students: number;
  staff: number;
  /** Regular sessions per team per in-season week. */
  regularPerWeek: number;
  looseSessions: number;
}

const SCALES: Record<Scale, ScaleSpec> = {
  small: { activities: 4, teams: 5, students: 60, staff: 12, regularPerWeek: 1, looseSessions: 10 },
  school: { activities: 24, teams: 120, students: 1200, staff: 120, regularPerWeek: 1, looseSessions: 300 },
  district: {
    activities: 24,
    teams: 1200,
    students: 12000,
    staff: 1200,
    regularPerWeek: 1,
    looseSessions: 3000,
  },
};

export const SCALE_NAMES = Object.keys(SCALES) as Scale[];

const YEAR_GROUPS = ['Year 7', 'Year 8', 'Year 9', 'Year 10', 'Year 11', 'Year 12'];
const CATEGORIES: readonly (readonly [string, number, number])[] = [
  // name, first year index, last year index (into YEAR_GROUPS)
  ['Junior', 0, 1],
  ['Intermediate', 2, 3],
  ['Senior', 4, 5],
  ['Open', 0, 5],
];
const SUBCATEGORIES = ['Boys', 'Girls', 'Mixed'] as const;

function contrastColor(hex: string): string {
  const n = Number.parseInt(hex.slice(1), 16);
  const r = (n >> 16) & 255;
  const g = (n >> 8) & 255;
  const b = n & 255;
  return 0.299 * r + 0.587 * g + 0.114 * b > 150 ? '#000000' : '#FFFFFF';
}

/** Midnight UTC of the Monday of the week containing `ms`. */
function mondayOf(ms: number): number {
  const day = Math.floor(ms / DAY) * DAY;
  const dow = (new Date(day).getUTCDay() + 6) % 7;
  return day - dow * DAY;
}

export function generateSchool(
  seed = 1,
  scale: Scale = 'small',
  now: string | number | Date = Date.UTC(2026, 2, 2),
): School {
  const spec = SCALES[scale];
  if (!spec) throw new Error(`unknown scale: ${String(scale)} (small, school or district)`);
  const nowMs = typeof now === 'number' ? now : new Date(now).getTime();
  if (Number.isNaN(nowMs)) throw new Error(`invalid now: ${String(now)}`);
  const rng = new Rng(seed);
  const tz = SCHOOL_TIME_ZONE;
  const pastStamp = (r: Rng, maxDays: number) => nowMs - r.int(HOUR, maxDays * DAY);

  // Organisations: the school itself and its opponents (owners of away venues).
  const organisation: Organisation = {
    id: 1,
    name: 'Hillcrest College',
    acronym: 'HC',
    shortName: 'Hillcrest',
    state: 'NSW',
  };
  const organisations: Organisation[] = [organisation];
  for (const [name, acronym, shortName] of OPPONENT_SCHOOLS) {
    organisations.push({ id: organisations.length + 1, name, acronym, shortName, state: 'NSW' });
  }

  const departments = DEPARTMENTS.map((name, i) => ({ id: 11 + i, name }));
  const deptByName = new Map(departments.map((d) => [d.name, d]));

  const yearGroups: SYearGroup[] = YEAR_GROUPS.map((name, i) => ({ id: 701 + i, name, archived: false }));
  yearGroups.push({ id: 700, name: 'Year 6 (former prep)', archived: true });

  // Activities: the first N of the catalogue; the last of a larger set is archived.
  const actRng = rng.fork(1);
  const specs = ACTIVITIES.slice(0, spec.activities);
  const activities: SActivity[] = specs.map((a, i) => {
    const archived = spec.activities > 4 && i === specs.length - 1;
    return {
      id: 101 + i,
      name: a.name,
      code: `${a.code}-${100 + i}`,
      emoji: a.emoji,
      archived,
      timesheetsEnabled: a.kind === 'sport' || a.kind === 'music',
      hexColor: a.hexColor,
      hexContrastColor: contrastColor(a.hexColor),
      colour: Number.parseInt(a.hexColor.slice(1), 16),
      smsCode: `EXT${a.code}`,
      rollMode: actRng.chance(0.8) ? 'present' : 'absent',
      activityType: a.kind === 'sport' ? 'Sport' : a.kind === 'music' ? 'Music' : 'Co-curricular',
      description: `${a.name} at Hillcrest College.`,
      archivedByUserId: archived ? 201 : null,
      archivedTimestamp: archived ? pastStamp(actRng, 200) : null,
      departmentId: deptByName.get(a.department)!.id,
      moveStudentsWithoutApproval: actRng.chance(0.5),
      kind: a.kind,
    };
  });
  const specOf = new Map(activities.map((a, i) => [a.id, specs[i] as ActivitySpec]));
  const liveActivities = activities.filter((a) => !a.archived);

  const categories: SCategory[] = CATEGORIES.map(([name], i) => ({ id: 51 + i, name, sortOrder: i + 1 }));

  // Locations: home venues (listed) and one association venue per opponent (not listed).
  const locRng = rng.fork(2);
  const locations: SLocation[] = [];
  HOME_VENUES.forEach((v, i) => {
    locations.push({
      id: 401 + i,
      name: v.name,
      address: v.address,
      latitude: Math.round((-33.79 + locRng.next() * 0.02) * 1e6) / 1e6,
      longitude: Math.round((151.01 + locRng.next() * 0.02) * 1e6) / 1e6,
      archived: false,
      ownerId: organisation.id,
      subLocations: v.sub ? v.sub.map((name, j) => ({ id: 4000 + i * 10 + j, name })) : null,
      association: false,
    });
  });
  locations.push({
    id: 401 + HOME_VENUES.length,
    name: 'Old Pavilion (demolished)',
    address: null,
    latitude: null,
    longitude: null,
    archived: true,
    ownerId: organisation.id,
    subLocations: null,
    association: false,
  });
  const awayVenue = new Map<number, SLocation>();
  for (const org of organisations.slice(1)) {
    const loc: SLocation = {
      id: 501 + awayVenue.size,
      name: `${org.shortName} Playing Fields`,
      address: `${locRng.int(1, 200)} ${locRng.pick(['Church', 'Station', 'Park', 'Ridge', 'Harbour'])} Street, Sydney NSW 2000`,
      latitude: Math.round((-33.95 + locRng.next() * 0.3) * 1e6) / 1e6,
      longitude: Math.round((151.0 + locRng.next() * 0.3) * 1e6) / 1e6,
      archived: false,
      ownerId: org.id,
      subLocations: null,
      association: true,
    };
    locations.push(loc);
    awayVenue.set(org.id, loc);
  }
  const homeFor = (activity: ActivitySpec, r: Rng): SLocation => {
    const name = r.pick(venuesFor(activity));
    return locations.find((l) => l.name === name)!;
  };

  // Staff users.
  const staffRng = rng.fork(3);
  const users: SUser[] = [];
  const usedEmails = new Set<string>();
  for (let i = 0; i < spec.staff; i++) {
    const id = 201 + i;
    const n = personName(staffRng, staffRng.chance(0.6) ? 'english' : undefined);
    let local = `${asciiSlug(n.firstName)}.${asciiSlug(n.lastName)}`;
    if (local.startsWith('.') || local.endsWith('.')) local = `staff${id}`;
    let email = `${local}@hillcrest.example.edu`;
    if (usedEmails.has(email)) email = `${local}${id}@hillcrest.example.edu`;
    usedEmails.add(email);
    const isAdmin = i < Math.max(1, Math.round(spec.staff / 60));
    const isManager = !isAdmin && i < Math.max(2, Math.round(spec.staff / 15));
    const integrationSynced = staffRng.chance(0.3);
    const legacySis = !integrationSynced && staffRng.chance(0.2);
    const sisId = legacySis ? `T${1000 + i}` : null;
    users.push({
      id,
      firstName: n.firstName,
      lastName: n.lastName,
      email,
      mobileNumber: staffRng.chance(0.8) ? `04${String(staffRng.int(10000000, 99999999))}` : null,
      isAdmin,
      isManager,
      employeeId: staffRng.chance(0.7) ? `E${String(5000 + i)}` : null,
      frozen: i >= 3 && staffRng.chance(0.07),
      wwccNumber: staffRng.chance(0.85) ? `WWC${String(staffRng.int(1000000, 9999999))}E` : null,
      wwccExpiryDate: staffRng.chance(0.85) ? nowMs + staffRng.int(-60, 1500) * DAY : null,
      updatedDetails: staffRng.chance(0.75),
      sisId,
      externalId: integrationSynced ? `HR-${String(30000 + i)}` : null,
      secondaryExternalId: legacySis
        ? sisId
        : integrationSynced && staffRng.chance(0.5)
          ? `AD\\${local}`
          : null,
      payment: staffRng.chance(0.6) ? 'ts' : 'na',
      inviteEmailLastSentTimestamp: staffRng.chance(0.9) ? pastStamp(staffRng, 700) : null,
      activityIds: [],
      departmentIds: isAdmin ? departments.map((d) => d.id) : [],
      integrationSynced,
      updatedAt: pastStamp(staffRng, 300),
    });
  }
  const activeStaff = users.filter((u) => !u.frozen);

  // Students, bucketed by year group for team selection.
  const stuRng = rng.fork(4);
  const students: SStudent[] = [];
  let guardianId = 90001;
  let conditionId = 1;
  for (let i = 0; i < spec.students; i++) {
    const id = 5001 + i;
    const n = personName(stuRng);
    const legalFirstName = stuRng.chance(0.08) ? null : n.legalFirstName;
    const guardians = [];
    const guardianCount = stuRng.weighted([
      [1, 3],
      [2, 6],
      [3, 1],
    ] as const);
    for (let g = 0; g < guardianCount; g++) {
      const gn = personName(stuRng, stuRng.chance(0.85) ? n.culture : undefined);
      const slug = asciiSlug(gn.firstName) || `parent${guardianId}`;
      guardians.push({
        id: guardianId,
        firstName: gn.firstName,
        lastName: stuRng.chance(0.8) ? n.lastName : gn.lastName,
        relationship: stuRng.pick(GUARDIAN_RELATIONSHIPS),
        email: `${slug}.${guardianId}@family.example.com`,
        mobileNumber: `04${String(stuRng.int(10000000, 99999999))}`,
      });
      guardianId++;
    }
    const medicalConditions = [];
    if (stuRng.chance(0.18)) {
      for (const c of stuRng.sample(MEDICAL_CONDITIONS, stuRng.int(1, 2))) {
        medicalConditions.push({ id: conditionId++, name: c.name, notes: c.notes });
      }
    }
    const sisId = `S${String(100000 + i * 7 + stuRng.int(0, 6))}`;
    // Drawn in the order they always were, so the rest of the school stays the same.
    const secondarySisId = stuRng.chance(0.3) ? `BOS${String(stuRng.int(10000000, 99999999))}` : null;
    const yearGroupId = (yearGroups[stuRng.int(0, YEAR_GROUPS.length - 1)] as SYearGroup).id;
    const current = !stuRng.chance(0.05);
    const gender = stuRng.weighted([
      ['Male', 48],
      ['Female', 48],
      ['Non-binary', 2],
      [null, 2],
    ] as const);
    // A boy or a girl gets a name that is a boy's or a girl's (or either) from the same culture.
    const [legal, preferred] = givenNameFor(n.culture, gender, [n.legalFirstName, n.firstName], id);
    students.push({
      id,
      firstName: preferred,
      legalFirstName: legalFirstName === null ? null : legal,
      lastName: n.lastName,
      sisId,
      secondarySisId,
      yearGroupId,
      current,
      email: `${sisId.toLowerCase()}@students.hillcrest.example.edu`,
      gender,
      boarder: stuRng.chance(0.12),
      culture: n.culture,
      guardians,
      medicalConditions,
    });
  }
  const byYear = new Map<number, SStudent[]>();
  for (const s of students) {
    const list = byYear.get(s.yearGroupId) ?? [];
    list.push(s);
    byYear.set(s.yearGroupId, list);
  }

  // Teams, memberships and positions.
  const teamRng = rng.fork(5);
  const teams: STeam[] = [];
  const memberships: SMembership[] = [];
  const yearStart = mondayOf(nowMs) - 24 * 7 * DAY;
  const nameCount = new Map<string, number>();
  const teamSeason = new Map<number, { firstWeek: number; lastWeek: number }>();
  let positionId = 8001;
  for (let i = 0; i < spec.teams; i++) {
    const id = 3001 + i;
    const activity = liveActivities[i % liveActivities.length] as SActivity;
    const aspec = specOf.get(activity.id)!;
    const sport = aspec.kind === 'sport';
    const catIndex = sport ? teamRng.int(0, 3) : teamRng.chance(0.5) ? 3 : teamRng.int(0, 2);
    const [catName, fromYear, toYear] = CATEGORIES[catIndex]!;
    const category = categories[catIndex] as SCategory;
    const sub = sport ? teamRng.pick(SUBCATEGORIES) : 'Mixed';
    const base = sport
      ? `${catName} ${sub === 'Mixed' ? '' : `${sub} `}${activity.name}`
      : `${catName} ${activity.name}`;
    const seq = (nameCount.get(base) ?? 0) + 1;
    nameCount.set(base, seq);
    const letter =
      String.fromCharCode(64 + (((seq - 1) % 26) + 1)) + (seq > 26 ? String(Math.ceil(seq / 26)) : '');
    const name = spec.teams <= 8 ? `${base} ${letter === 'A' ? '' : letter}`.trim() : `${base} ${letter}`;
    const positions = (aspec.positions ?? []).map(([pname, slots]) => ({
      id: positionId++,
      name: pname,
      numberOfSlots: slots,
    }));
    const staffCount = teamRng.int(1, 3);
    const staff = teamRng.sample(activeStaff, staffCount).map((u) => ({
      userId: u.id,
      start: null as number | null,
      end: null as number | null,
    }));
    // One former coach whose assignment ended, for showAsOfDate.
    if (teamRng.chance(0.15)) {
      const former = teamRng.pick(users);
      if (!staff.some((s) => s.userId === former.id)) {
        staff.push({ userId: former.id, start: yearStart, end: nowMs - teamRng.int(10, 60) * DAY });
      }
    }
    for (const s of staff) {
      const u = users.find((x) => x.id === s.userId)!;
      if (!u.activityIds.includes(activity.id)) u.activityIds.push(activity.id);
      if (u.isManager && !u.departmentIds.includes(activity.departmentId))
        u.departmentIds.push(activity.departmentId);
    }
    // Sports play one 20-week season; everything else runs all year.
    // Staggered by index so even the small school has one season straddling `now` (week 24).
    const firstWeek = sport ? ([10, 20, 0, 26, 14][i % 5] as number) : 0;
    const lastWeek = sport ? firstWeek + 19 : 51;
    teamSeason.set(id, { firstWeek, lastWeek });
    const team: STeam = {
      id,
      name,
      sisId: `${activity.code}-${catName.slice(0, 3).toUpperCase()}-${id}`,
      // The last team is always hidden, so every scale has one.
      hidden: i === spec.teams - 1 || teamRng.chance(0.04),
      playersRanked: sport && teamRng.chance(0.3),
      categoryId: teamRng.chance(0.92) ? category.id : null,
      subcategory: sport ? { id: 61 + SUBCATEGORIES.indexOf(sub), name: sub } : null,
      activityId: activity.id,
      staff,
      positions,
      studentSortType: teamRng.pick(['alphabetical', 'jerseyNumber', 'custom', 'yearGroup']),
      updatedAt: pastStamp(teamRng, 120),
    };
    teams.push(team);

    // Members from eligible year groups (and gender for single-sex teams).
    const size = sport
      ? teamRng.int(12, 20)
      : aspec.kind === 'music'
        ? teamRng.int(15, 32)
        : teamRng.int(8, 24);
    const pool: SStudent[] = [];
    for (let y = fromYear; y <= toYear; y++) {
      for (const s of byYear.get((yearGroups[y] as SYearGroup).id) ?? []) {
        // A single-sex team lists no one recorded as, or named as, the other sex.
        const named = givenNameGender(s.firstName);
        if (sub === 'Boys' && (s.gender === 'Female' || named === 'female')) continue;
        if (sub === 'Girls' && (s.gender === 'Male' || named === 'male')) continue;
        pool.push(s);
      }
    }
    const chosen = teamRng.sample(pool, size);
    const seasonStart = yearStart + firstWeek * 7 * DAY;
    const jerseys = teamRng.sample(
      Array.from({ length: 40 }, (_, k) => k + 1),
      chosen.length,
    );
    const captains = sport ? teamRng.int(1, 2) : 0;
    chosen.forEach((s, k) => {
      let start: number | null = seasonStart - teamRng.int(1, 20) * DAY;
      let end: number | null = null;
      if (teamRng.chance(0.08)) start = null; // older records carry no start
      if (!s.current) end = Math.min(nowMs - DAY, seasonStart + teamRng.int(5, 60) * DAY);
      else if (teamRng.chance(0.07)) end = nowMs - teamRng.int(3, 50) * DAY;
      if (end !== null && start !== null && end <= start) end = start + 7 * DAY;
      const pos = positions.length > 0 && teamRng.chance(0.85) ? teamRng.pick(positions).id : null;
      memberships.push({
        id: 60001 + memberships.length,
        studentId: s.id,
        teamId: id,
        start,
        end,
        captain: k < captains && end === null,
        jerseyNumber: sport ? String(jerseys[k]) : '',
        positionId: pos,
        sortOrder: k + 1,
      });
    });
    // A late joiner, so showAsOfDate before today shows a different roster.
    const late = teamRng.pick(pool.length > 0 ? pool : students);
    if (!chosen.includes(late) && late.current) {
      memberships.push({
        id: 60001 + memberships.length,
        studentId: late.id,
        teamId: id,
        start: nowMs - teamRng.int(2, 20) * DAY,
        end: null,
        captain: false,
        jerseyNumber: sport ? String(41 + (i % 50)) : '',
        positionId: null,
        sortOrder: chosen.length + 1,
      });
    }
  }
  const membersByTeam = new Map<number, SMembership[]>();
  for (const m of memberships) {
    const list = membersByTeam.get(m.teamId) ?? [];
    list.push(m);
    membersByTeam.set(m.teamId, list);
  }

  // Custom fields: one of every data type, with staff-only and guardian-visible audiences.
  const customFields: SCustomField[] = [
    {
      key: 'meet_time',
      label: 'Meet time',
      dataType: 'time',
      showToUserTypes: ['admin', 'manager', 'staff', 'guardian', 'student'],
      showAfterField: null,
    },
    {
      key: 'uniform',
      label: 'Uniform',
      dataType: 'single-select',
      showToUserTypes: ['admin', 'manager', 'staff', 'guardian', 'student'],
      showAfterField: 'meet_time',
    },
    {
      key: 'transport',
      label: 'Transport',
      dataType: 'short-text',
      showToUserTypes: ['admin', 'manager', 'staff', 'guardian'],
      showAfterField: 'uniform',
    },
    {
      key: 'staff_on_duty',
      label: 'Staff on duty',
      dataType: 'staff',
      showToUserTypes: ['admin', 'manager', 'staff'],
      showAfterField: 'transport',
    },
    {
      key: 'bus_list',
      label: 'Students on the bus',
      dataType: 'student',
      showToUserTypes: ['admin', 'manager', 'staff'],
      showAfterField: 'staff_on_duty',
    },
    {
      key: 'coach_note',
      label: 'Coach note (staff only)',
      dataType: 'short-text',
      showToUserTypes: ['admin', 'manager'],
      showAfterField: 'bus_list',
    },
  ];

  // Sessions.
  const sesRng = rng.fork(6);
  const sessions: SSession[] = [];
  let sessionId = 100001;
  let seriesId = 70001;
  const rosterAt = (teamIds: number[], at: number, extra: number[]): number[] => {
    const ids = new Set<number>();
    for (const t of teamIds) {
      for (const m of membersByTeam.get(t) ?? []) {
        if ((m.start === null || m.start <= at) && (m.end === null || m.end > at)) ids.add(m.studentId);
      }
    }
    for (const s of extra) ids.add(s);
    return [...ids];
  };
  const sessionStamp = (end: number, r: Rng): number => {
    if (end < nowMs) return Math.min(nowMs - MINUTE, end + r.int(1, 48) * HOUR);
    return nowMs - r.int(1, 60 * 24) * HOUR;
  };

  for (const team of teams) {
    const activity = activities.find((a) => a.id === team.activityId)!;
    const aspec = specOf.get(activity.id)!;
    const season = teamSeason.get(team.id)!;
    const sport = aspec.kind === 'sport';
    const staffIds = team.staff.filter((s) => s.end === null).map((s) => s.userId);
    const home = homeFor(aspec, sesRng);
    const regularDays = sesRng.sample([0, 1, 2, 3, 4], spec.regularPerWeek + (sesRng.chance(0.3) ? 1 : 0));
    const morning = sesRng.chance(0.2);
    const regularSeries = regularDays.map(() => seriesId++);
    const fixtureDay = sesRng.chance(0.8) ? 5 : 2; // Saturday or Wednesday afternoon
    let round = 0;
    for (let w = season.firstWeek; w <= season.lastWeek && w < 52; w++) {
      const weekStart = yearStart + w * 7 * DAY;
      regularDays.forEach((dow, k) => {
        const day = weekStart + dow * DAY;
        const start = wallToUtc(day, morning ? 7 : 15, morning ? 0 : 30, tz);
        const end = start + (morning ? 75 : 90) * MINUTE;
        const cancelled = sesRng.chance(0.04);
        const optional = !sport && sesRng.chance(0.06);
        sessions.push(
          makeSession({
            id: sessionId++,
            title: `${team.name} ${aspec.regular}${optional ? ' (optional)' : ''}`,
            notes: cancelled
              ? 'Cancelled: wet weather / venue unavailable.'
              : sesRng.pick(staffNotesFor(aspec)),
            studentParentNotes: cancelled ? 'This session is cancelled.' : sesRng.pick(parentNotesFor(aspec)),
            activity,
            start,
            end,
            cancelled,
            optional,
            locationId: home.id,
            teamIds: [team.id],
            staffIds,
            seriesId: regularSeries[k] as number,
            creatorUserId: staffIds[0] ?? 201,
          }),
        );
      });
      if (sport && aspec.scoreMax !== undefined) {
        round++;
        const day = weekStart + fixtureDay * DAY;
        const start = wallToUtc(
          day,
          fixtureDay === 5 ? sesRng.pick([8, 9, 10, 11, 13]) : 15,
          fixtureDay === 5 ? 0 : 45,
          tz,
        );
        const end = start + sesRng.pick([60, 75, 90, 120]) * MINUTE;
        const bye = sesRng.chance(0.07);
        const opponentOrg = sesRng.pick(organisations.slice(1));
        const homeGame = sesRng.chance(0.5);
        const past = end < nowMs;
        let result: SSession['result'] = null;
        let us: number | null = null;
        let them: number | null = null;
        if (past && !bye) {
          result = sesRng.weighted([
            ['W', 40],
            ['L', 35],
            ['D', 10],
            ['F', 3],
            ['OF', 4],
            ['NR', 8],
          ] as const);
          const max = aspec.scoreMax;
          if (result === 'W' || result === 'L' || result === 'D') {
            const a = sesRng.int(0, max);
            const b = result === 'D' ? a : sesRng.int(0, Math.max(0, a - 1));
            [us, them] =
              result === 'L' ? [b, a === b ? a + 1 : a] : [a === b && result === 'W' ? a + 1 : a, b];
          } else if (result === 'F') {
            [us, them] = [0, max > 10 ? 20 : 3];
          } else if (result === 'OF') {
            [us, them] = [max > 10 ? 20 : 3, 0];
          }
        }
        const cancelled = !bye && sesRng.chance(0.04);
        const status: SSession['status'] = past
          ? 'confirmed'
          : sesRng.weighted([
              ['confirmed', 75],
              ['unconfirmed', 15],
              ['draft', 10],
            ] as const);
        const opponentTeam = `${opponentOrg.shortName} ${team.name.split(' ').slice(0, 2).join(' ')}`;
        const s = makeSession({
          id: sessionId++,
          title: bye ? `${team.name} — Bye` : `${team.name} vs ${opponentTeam}`,
          notes: bye
            ? ''
            : homeGame
              ? 'Home fixture: set up goals and benches 30 min early.'
              : `Away fixture: bus departs 45 min before start (booking ${sesRng.int(1000, 9999)}).`,
          studentParentNotes: bye
            ? 'No game this week (bye).'
            : homeGame
              ? 'Home game.'
              : 'Away game — see transport.',
          activity,
          start,
          end,
          cancelled,
          optional: false,
          locationId: bye ? null : homeGame ? home.id : awayVenue.get(opponentOrg.id)!.id,
          occasion: bye ? 'regular' : homeGame ? 'home' : 'away',
          teamIds: [team.id],
          staffIds,
          seriesId: seriesId++,
          creatorUserId: staffIds[0] ?? 201,
        });
        s.scored = true;
        s.bye = bye;
        s.status = status;
        s.opponent = bye ? null : opponentTeam;
        s.opponentTeam = bye ? null : opponentTeam;
        s.opponentOrganisation = bye ? null : opponentOrg.name;
        s.result = result;
        s.organisationScore = us;
        s.opponentScore = them;
        s.roundName = `Round ${round}`;
        s.resultNotes =
          result === 'NR'
            ? 'Abandoned: lightning.'
            : result === 'W' && sesRng.chance(0.3)
              ? 'Great team effort.'
              : null;
        sessions.push(s);
      }
    }
  }

  // Sessions with no team: trials with students put on directly, whole-school events, meetings.
  for (let i = 0; i < spec.looseSessions; i++) {
    const activity = sesRng.pick(liveActivities);
    const aspec = specOf.get(activity.id)!;
    const w = sesRng.int(0, 51);
    const day = yearStart + w * 7 * DAY + sesRng.int(0, 4) * DAY;
    const start = wallToUtc(day, sesRng.pick([12, 16, 18]), sesRng.pick([0, 30]), tz);
    const end = start + sesRng.pick([45, 60, 120]) * MINUTE;
    const title = `${activity.name} ${sesRng.pick(oneOffsFor(aspec))}`;
    // Trials and auditions: the students trying out are put on the session directly.
    const extra = /(Trials|Auditions)$/.test(title)
      ? sesRng
          .sample(
            students.filter((s) => s.current),
            sesRng.int(5, 25),
          )
          .map((s) => s.id)
      : [];
    sessions.push(
      makeSession({
        id: sessionId++,
        title,
        notes: sesRng.pick(staffNotesFor(aspec)),
        studentParentNotes: sesRng.pick(parentNotesFor(aspec)),
        activity,
        start,
        end,
        cancelled: sesRng.chance(0.03),
        optional: sesRng.chance(0.3),
        locationId: sesRng.chance(0.9) ? homeFor(aspec, sesRng).id : null,
        teamIds: [],
        extraStudentIds: extra,
        staffIds: sesRng.sample(activeStaff, sesRng.int(0, 2)).map((u) => u.id),
        seriesId: seriesId++,
        creatorUserId: sesRng.pick(activeStaff).id,
      }),
    );
  }

  function makeSession(p: {
    id: number;
    title: string;
    notes: string;
    studentParentNotes: string;
    activity: SActivity;
    start: number;
    end: number;
    cancelled: boolean;
    optional: boolean;
    locationId: number | null;
    teamIds: number[];
    extraStudentIds?: number[];
    staffIds: number[];
    seriesId: number;
    creatorUserId: number;
    /** What the team wears depends on it (training kit, home or away kit). */
    occasion?: 'regular' | 'home' | 'away';
  }): SSession {
    const aspec = specOf.get(p.activity.id)!;
    const extra = p.extraStudentIds ?? [];
    const rosterIds = rosterAt(p.teamIds, p.start, extra);
    const meet = hourMinute(p.start - 30 * MINUTE, tz);
    const away = p.locationId !== null && p.locationId >= 501;
    const teamCustomFieldsData: Record<number, Record<string, CustomFieldValue>> = {};
    for (const t of p.teamIds) {
      const data: Record<string, CustomFieldValue> = {
        meet_time: meet,
        uniform: sesRng.pick(uniformsFor(aspec, p.occasion ?? 'regular')),
      };
      if (away) {
        data.transport = `Bus from Gate ${sesRng.int(1, 4)} at ${hourMinute(p.start - 60 * MINUTE, tz)}`;
        data.bus_list = sesRng.sample(rosterIds, Math.min(rosterIds.length, 12));
      }
      if (sesRng.chance(0.2)) data.coach_note = 'Rotate the bench; two players returning from injury.';
      teamCustomFieldsData[t] = data;
    }
    const customFieldsData: Record<string, CustomFieldValue> = {};
    if (p.teamIds.length > 0) {
      customFieldsData.meet_time = meet;
      if (p.staffIds.length > 0) customFieldsData.staff_on_duty = p.staffIds.slice(0, 2);
      if (away) customFieldsData.transport = 'School bus';
    }
    return {
      id: p.id,
      title: p.title,
      notes: p.notes,
      studentParentNotes: p.studentParentNotes,
      opponent: null,
      opponentTeam: null,
      opponentOrganisation: null,
      bye: false,
      cancelled: p.cancelled,
      scored: false,
      hexColor: p.activity.hexColor,
      start: p.start,
      end: p.end,
      creatorUserId: p.creatorUserId,
      seriesId: p.seriesId,
      organisationScore: null,
      opponentScore: null,
      result: null,
      resultNotes: null,
      roundName: null,
      remindStaff: sesRng.chance(0.5),
      status: 'confirmed',
      optional: p.optional,
      activityId: p.activity.id,
      locationId: p.locationId,
      teamIds: p.teamIds,
      extraStudentIds: extra,
      staffIds: p.staffIds,
      customFieldsData,
      teamCustomFieldsData,
      updatedAt: sessionStamp(p.end, sesRng),
      rosterIds,
    };
  }

  // No activities on public holidays or in school holidays (school-calendar.ts). Dropped once every session is
  // made, so a day off costs only its own sessions (their ids stay unused), not the draws of the rest.
  const localDate = (ms: number) => new Date(ms + offsetMinutes(ms, tz) * MINUTE).toISOString().slice(0, 10);
  for (let i = sessions.length - 1; i >= 0; i--)
    if (dayOff(localDate((sessions[i] as SSession).start)) !== null) sessions.splice(i, 1);
  sessions.sort((a, b) => a.start - b.start || a.id - b.id);

  // Attendance: rolls marked for most past team sessions of the last 90 days.
  const attRng = rng.fork(7);
  const attendanceFlags = [
    { id: 1, name: 'Late' },
    { id: 2, name: 'Left early' },
    { id: 3, name: 'Injured' },
    { id: 4, name: 'Uniform' },
  ];
  const attendanceRecords: SAttendanceRecord[] = [];
  let rollId = 20001;
  for (const s of sessions) {
    if (s.end >= nowMs || s.end < nowMs - 90 * DAY || s.teamIds.length === 0 || s.cancelled || s.bye)
      continue;
    if (!attRng.chance(0.8)) continue;
    const marker = s.staffIds[0] ?? null;
    const timeMarked = s.start + attRng.int(5, 30) * MINUTE;
    const edited = attRng.chance(0.1);
    const timeEdited = edited ? timeMarked + attRng.int(1, 48) * HOUR : null;
    const rid = rollId++;
    for (const studentId of s.rosterIds) {
      const absent = attRng.chance(0.08);
      const flags: number[] = [];
      if (!absent && attRng.chance(0.05)) flags.push(1);
      if (!absent && attRng.chance(0.02)) flags.push(2);
      if (attRng.chance(0.01)) flags.push(3);
      attendanceRecords.push({
        id: 300001 + attendanceRecords.length,
        sessionId: s.id,
        studentId,
        teamId: s.teamIds[0] ?? null,
        absent,
        explained: absent && attRng.chance(0.6),
        comment:
          absent && attRng.chance(0.3)
            ? 'Parent emailed in advance'
            : flags.length > 0 && attRng.chance(0.5)
              ? 'Arrived after warm-up'
              : null,
        addedToRoll: attRng.chance(0.03),
        flagIds: flags,
        rollId: rid,
        markedByUserId: marker,
        timeMarked,
        editedByUserId: edited ? marker : null,
        timeEdited,
        updatedByUserId: marker,
        updatedAt: Math.min(nowMs - MINUTE, timeEdited ?? timeMarked),
      });
    }
  }

  // Incidents, mostly at sport sessions.
  const incRng = rng.fork(8);
  const incidentTemplate = {
    id: 1,
    field: [
      {
        label: 'Description',
        fieldType: 'text' as const,
        required: true,
        limit: 2000,
        showLimit: true,
        externalField: null,
      },
      {
        label: 'Body part',
        fieldType: 'dropdown' as const,
        required: false,
        options: ['Head', 'Shoulder', 'Arm', 'Hand', 'Knee', 'Ankle', 'Other'],
        externalField: 'injury_site',
      },
      { label: 'Time of injury', fieldType: 'time' as const, required: false, externalField: null },
      {
        label: 'Concussion check',
        fieldType: 'concussion-check' as const,
        required: false,
        externalField: null,
      },
      { label: 'Body chart', fieldType: 'body-chart' as const, required: false, externalField: null },
      { label: 'Photo', fieldType: 'photo' as const, required: false, externalField: null },
    ],
  };
  const incidents: SIncident[] = [];
  const pastSport = sessions.filter(
    (s) =>
      s.end < nowMs && s.rosterIds.length > 0 && !s.cancelled && specOf.get(s.activityId)?.kind === 'sport',
  );
  const incidentCount = Math.max(6, Math.round(spec.students / 20));
  for (let i = 0; i < incidentCount && pastSport.length > 0; i++) {
    const s = incRng.pick(pastSport);
    const studentId = incRng.pick(s.rosterIds);
    const concussionStatus = incRng.weighted([
      ['none', 70],
      ['potential', 20],
      ['confirmed', 10],
    ] as const);
    const at = s.start + incRng.int(10, 80) * MINUTE;
    const part = incRng.pick(['Head', 'Knee', 'Ankle', 'Hand', 'Shoulder']);
    incidents.push({
      id: 9001 + i,
      location: incRng.pick([
        'Main Oval — north end',
        'Court 2 baseline',
        'Change rooms',
        'Away ground',
        'Pool deck',
      ]),
      studentId,
      fields: incRng.chance(0.1)
        ? null
        : {
            Description: {
              value: `Collision during play; ${part.toLowerCase()} knock. Ice applied.`,
              fieldType: 'text',
            },
            'Body part': { value: concussionStatus === 'none' ? part : 'Head', fieldType: 'dropdown' },
            'Time of injury': { value: hourMinute(at, tz), fieldType: 'time' },
          },
      dateTime: at,
      concussionStatus,
      returnToPlay:
        concussionStatus === 'confirmed'
          ? { date: at + incRng.int(12, 21) * DAY, reason: 'Graduated return-to-play protocol' }
          : concussionStatus === 'potential' && incRng.chance(0.5)
            ? { date: at + 7 * DAY, reason: null }
            : null,
      activityId: s.activityId,
      sessionId: incRng.chance(0.9) ? s.id : null,
      staffUserId: s.staffIds[0] ?? 201,
      archived: at < nowMs - 60 * DAY && incRng.chance(0.5),
      updatedAt: Math.min(nowMs - MINUTE, at + incRng.int(1, 72) * HOUR),
    });
  }

  // Selection seasons and activity selections.
  const selRng = rng.fork(9);
  const optionsFor = (seasonId: number) =>
    liveActivities
      .slice(0, 8)
      .map((a, k) => ({ id: `${seasonId}-${k + 1}`, label: `${a.name} (${k % 2 === 0 ? 'Mon' : 'Thu'})` }));
  const seasons: SSeason[] = [
    {
      id: 31,
      name: 'Semester 1 Co-curricular',
      hidden: true,
      open: yearStart - 30 * DAY,
      close: yearStart - 10 * DAY,
      options: optionsFor(31),
    },
    {
      id: 32,
      name: 'Semester 2 Co-curricular',
      hidden: false,
      open: nowMs - 40 * DAY,
      close: nowMs + 10 * DAY,
      options: optionsFor(32),
    },
    { id: 33, name: 'Summer Sport Trials', hidden: false, open: null, close: null, options: [] },
  ];
  const activitySelections: SActivitySelection[] = [];
  for (const s of students) {
    if (!s.current || !selRng.chance(0.4)) continue;
    const count = selRng.int(1, 2);
    for (let k = 0; k < count; k++) {
      const season = selRng.pick(seasons);
      const option = season.options.length > 0 ? selRng.pick(season.options) : null;
      const activity = option
        ? liveActivities[Number(option.id.split('-')[1]) - 1]!
        : selRng.pick(liveActivities);
      const base = season.open ?? nowMs - 100 * DAY;
      const id = 40001 + activitySelections.length;
      activitySelections.push({
        id,
        selectedTimestamp: Math.min(nowMs - MINUTE, base + selRng.int(0, 20 * 24) * HOUR),
        selectedByGuardianId: selRng.chance(0.6) ? (s.guardians[0]?.id ?? null) : null,
        onWaitlist: selRng.chance(0.1),
        activityId: activity.id,
        seasonId: season.id,
        seasonActivityOptionId: option?.id ?? null,
        studentId: s.id,
        invoice: {
          id: `inv_${(id * 2654435761).toString(36).slice(-8)}`,
          reference: `CB-${String(100000 + id)}`,
          status: selRng.weighted([
            ['paid', 55],
            ['unpaid', 25],
            ['partially-paid', 12],
            ['processing', 8],
          ] as const),
        },
        deleted: selRng.chance(0.04),
      });
    }
  }

  // Pre-explained absences; a few cover today so team sheets show `absentToday`.
  const absRng = rng.fork(10);
  const absences: SAbsence[] = [];
  for (const s of students) {
    if (!s.current || !absRng.chance(0.12)) continue;
    const n = absRng.int(1, 2);
    for (let k = 0; k < n; k++) {
      const coversNow = absRng.chance(0.15);
      const startDay = coversNow
        ? Math.floor(nowMs / DAY) * DAY
        : Math.floor(nowMs / DAY) * DAY + absRng.int(-60, 60) * DAY;
      const start = wallToUtc(startDay, absRng.pick([0, 8, 13]), 0, tz);
      const end = start + absRng.pick([4, 10, 24, 72]) * HOUR + (coversNow ? DAY : 0);
      absences.push({
        id: 7001 + absences.length,
        studentId: s.id,
        start: coversNow ? Math.min(start, nowMs - HOUR) : start,
        end,
        explained: absRng.chance(0.85),
        reason: absRng.pick(ABSENCE_REASONS),
        updatedAt: Math.min(nowMs - MINUTE, start - absRng.int(1, 14) * DAY),
      });
    }
  }

  return {
    seed,
    scale,
    now: new Date(nowMs).toISOString(),
    timeZone: tz,
    organisation,
    organisations,
    departments,
    yearGroups,
    activities,
    categories,
    locations,
    users,
    students,
    teams,
    memberships,
    customFields,
    sessions,
    attendanceFlags,
    attendanceRecords,
    incidentTemplate,
    incidents,
    seasons,
    activitySelections,
    absences,
  };
}
