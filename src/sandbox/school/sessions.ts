// Sessions: each team's regular sessions and (for sports) fixtures with their results, sessions with no team
// (trials, whole-school events, meetings), and the custom fields they carry. None on a day off.

import { hourMinute, offsetMinutes, wallToUtc } from '../../util/time-zone.ts';
import { type ActivitySpec, oneOffsFor, parentNotesFor, staffNotesFor, uniformsFor } from '../fixed-facts.ts';
import type {
  CustomFieldValue,
  Organisation,
  SActivity,
  SCustomField,
  SMembership,
  SSession,
  SStudent,
  STeam,
  SUser,
} from '../model.ts';
import type { Rng } from '../prng.ts';
import { dayOff } from '../school-calendar.ts';
import { DAY, HOUR, MINUTE } from '../time.ts';
import { unscoredSession } from '../writes.ts';
import { type Basis, groupBy } from './basis.ts';
import { type Frame, homeFor, type Venues } from './places.ts';
import type { Squads, TeamSeason } from './teams.ts';

/** What every session is drawn from; `ids` are the next free session and series ids. */
interface SessionDraw {
  basis: Basis;
  sesRng: Rng;
  frame: Frame;
  venues: Venues;
  membersByTeam: Map<number, SMembership[]>;
  activeStaff: SUser[];
  ids: { session: number; series: number };
}

/** A team's fixed choices for the year, drawn once before its weeks. */
interface TeamPlan {
  team: STeam;
  activity: SActivity;
  aspec: ActivitySpec;
  staffIds: number[];
  fixtureDay: number;
}

export function makeSessions(
  basis: Basis,
  sesRng: Rng,
  frame: Frame,
  venues: Venues,
  squads: Squads,
  users: readonly SUser[],
  students: readonly SStudent[],
): SSession[] {
  const d: SessionDraw = {
    basis,
    sesRng,
    frame,
    venues,
    membersByTeam: groupBy(squads.memberships, (m) => m.teamId),
    activeStaff: users.filter((u) => !u.frozen),
    ids: { session: 100001, series: 70001 },
  };
  const sessions: SSession[] = [];
  for (const team of squads.teams) teamSessions(d, team, squads.teamSeason.get(team.id)!, sessions);
  const current = students.filter((s) => s.current);
  for (let i = 0; i < basis.spec.looseSessions; i++) sessions.push(looseSession(d, current));
  // No activities on public holidays or in school holidays (school-calendar.ts). Dropped once every session is
  // made, so a day off costs only its own sessions (their ids stay unused), not the draws of the rest. A school
  // without holidays (basis.ts) keeps them all.
  const { tz } = basis;
  const localDate = (ms: number) => new Date(ms + offsetMinutes(ms, tz) * MINUTE).toISOString().slice(0, 10);
  for (let i = sessions.length - 1; basis.holidays && i >= 0; i--)
    if (dayOff(localDate((sessions[i] as SSession).start)) !== null) sessions.splice(i, 1);
  sessions.sort((a, b) => a.start - b.start || a.id - b.id);
  return sessions;
}

/** Every in-season week: the regular sessions, and a fixture for a scored sport. */
function teamSessions(d: SessionDraw, team: STeam, season: TeamSeason, sessions: SSession[]): void {
  const { sesRng } = d;
  const activity = d.frame.activities.find((a) => a.id === team.activityId)!;
  const aspec = d.frame.specOf.get(activity.id)!;
  const sport = aspec.kind === 'sport';
  const staffIds = team.staff.filter((s) => s.end === null).map((s) => s.userId);
  const home = homeFor(d.venues.locations, aspec, sesRng);
  const regularDays = sesRng.sample(
    [0, 1, 2, 3, 4],
    d.basis.spec.regularPerWeek + (sesRng.chance(0.3) ? 1 : 0),
  );
  const morning = sesRng.chance(0.2);
  const regularSeries = regularDays.map(() => d.ids.series++);
  const fixtureDay = sesRng.chance(0.8) ? 5 : 2; // Saturday or Wednesday afternoon
  const plan: TeamPlan = { team, activity, aspec, staffIds, fixtureDay };
  let round = 0;
  for (let w = season.firstWeek; w <= season.lastWeek && w < 52; w++) {
    const weekStart = d.basis.yearStart + w * 7 * DAY;
    regularDays.forEach((dow, k) => {
      const day = weekStart + dow * DAY;
      const start = wallToUtc(day, morning ? 7 : 15, morning ? 0 : 30, d.basis.tz);
      const end = start + (morning ? 75 : 90) * MINUTE;
      const cancelled = sesRng.chance(0.04);
      const optional = !sport && sesRng.chance(0.06);
      sessions.push(
        makeSession(d, {
          id: d.ids.session++,
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
    if (sport && aspec.scoreMax !== undefined) sessions.push(fixture(d, plan, weekStart, ++round, home.id));
  }
}

/** A game against another school (home or away) or a bye, with its result once played. */
function fixture(d: SessionDraw, plan: TeamPlan, weekStart: number, round: number, homeId: number): SSession {
  const { sesRng } = d;
  const { team, fixtureDay, staffIds } = plan;
  const day = weekStart + fixtureDay * DAY;
  const start = wallToUtc(
    day,
    fixtureDay === 5 ? sesRng.pick([8, 9, 10, 11, 13]) : 15,
    fixtureDay === 5 ? 0 : 45,
    d.basis.tz,
  );
  const end = start + sesRng.pick([60, 75, 90, 120]) * MINUTE;
  const bye = sesRng.chance(0.07);
  const opponentOrg = sesRng.pick(d.frame.organisations.slice(1));
  const homeGame = sesRng.chance(0.5);
  const past = end < d.basis.nowMs;
  const score = past && !bye ? drawResult(sesRng, plan.aspec.scoreMax!) : NO_RESULT;
  const cancelled = !bye && sesRng.chance(0.04);
  const status: SSession['status'] = past
    ? 'confirmed'
    : sesRng.weighted([
        ['confirmed', 75],
        ['unconfirmed', 15],
        ['draft', 10],
      ] as const);
  const opponentTeam = `${opponentOrg.shortName} ${team.name.split(' ').slice(0, 2).join(' ')}`;
  const s = makeSession(d, {
    id: d.ids.session++,
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
    activity: plan.activity,
    start,
    end,
    cancelled,
    optional: false,
    locationId: bye ? null : homeGame ? homeId : awayVenueOf(d, opponentOrg),
    occasion: bye ? 'regular' : homeGame ? 'home' : 'away',
    teamIds: [team.id],
    staffIds,
    seriesId: d.ids.series++,
    creatorUserId: staffIds[0] ?? 201,
  });
  s.scored = true;
  s.bye = bye;
  s.status = status;
  s.opponent = bye ? null : opponentTeam;
  s.opponentTeam = bye ? null : opponentTeam;
  s.opponentOrganisation = bye ? null : opponentOrg.name;
  s.result = score.result;
  s.organisationScore = score.us;
  s.opponentScore = score.them;
  s.roundName = `Round ${round}`;
  s.resultNotes =
    score.result === 'NR'
      ? 'Abandoned: lightning.'
      : score.result === 'W' && sesRng.chance(0.3)
        ? 'Great team effort.'
        : null;
  return s;
}

function awayVenueOf(d: SessionDraw, opponent: Organisation): number {
  return d.venues.awayVenue.get(opponent.id)!.id;
}

interface Score {
  result: SSession['result'];
  us: number | null;
  them: number | null;
}

const NO_RESULT: Score = { result: null, us: null, them: null };

/** A played game's result; scores agree with it (a forfeit counts 20 or 3 to nil, by the sport's scale). */
function drawResult(sesRng: Rng, max: number): Score {
  const result = sesRng.weighted([
    ['W', 40],
    ['L', 35],
    ['D', 10],
    ['F', 3],
    ['OF', 4],
    ['NR', 8],
  ] as const);
  if (result === 'W' || result === 'L' || result === 'D') {
    const a = sesRng.int(0, max);
    const b = result === 'D' ? a : sesRng.int(0, Math.max(0, a - 1));
    const [us, them] = result === 'L' ? [b, a === b ? a + 1 : a] : [a === b && result === 'W' ? a + 1 : a, b];
    return { result, us: us as number, them: them as number };
  }
  if (result === 'F') return { result, us: 0, them: max > 10 ? 20 : 3 };
  if (result === 'OF') return { result, us: max > 10 ? 20 : 3, them: 0 };
  return { result, us: null, them: null };
}

/** A session with no team: trials and auditions put the students trying out on directly. */
function looseSession(d: SessionDraw, currentStudents: readonly SStudent[]): SSession {
  const { sesRng } = d;
  const activity = sesRng.pick(d.frame.liveActivities);
  const aspec = d.frame.specOf.get(activity.id)!;
  const w = sesRng.int(0, 51);
  const day = d.basis.yearStart + w * 7 * DAY + sesRng.int(0, 4) * DAY;
  const start = wallToUtc(day, sesRng.pick([12, 16, 18]), sesRng.pick([0, 30]), d.basis.tz);
  const end = start + sesRng.pick([45, 60, 120]) * MINUTE;
  const title = `${activity.name} ${sesRng.pick(oneOffsFor(aspec))}`;
  const extra = /(Trials|Auditions)$/.test(title)
    ? sesRng.sample(currentStudents, sesRng.int(5, 25)).map((s) => s.id)
    : [];
  return makeSession(d, {
    id: d.ids.session++,
    title,
    notes: sesRng.pick(staffNotesFor(aspec)),
    studentParentNotes: sesRng.pick(parentNotesFor(aspec)),
    activity,
    start,
    end,
    cancelled: sesRng.chance(0.03),
    optional: sesRng.chance(0.3),
    locationId: sesRng.chance(0.9) ? homeFor(d.venues.locations, aspec, sesRng).id : null,
    teamIds: [],
    extraStudentIds: extra,
    staffIds: sesRng.sample(d.activeStaff, sesRng.int(0, 2)).map((u) => u.id),
    seriesId: d.ids.series++,
    creatorUserId: sesRng.pick(d.activeStaff).id,
  });
}

interface NewSession {
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
}

/** An unscored session with its roster at its start and its custom fields. */
function makeSession(d: SessionDraw, p: NewSession): SSession {
  const extra = p.extraStudentIds ?? [];
  const rosterIds = rosterAt(d, p.teamIds, p.start, extra);
  const { teamCustomFieldsData, customFieldsData } = customFieldsFor(d, p, rosterIds);
  // Drawn in this order from the sessions' Rng (the generated school depends on it).
  const remindStaff = d.sesRng.chance(0.5);
  const updatedAt = sessionStamp(d.basis, p.end, d.sesRng);
  return unscoredSession({
    id: p.id,
    title: p.title,
    notes: p.notes,
    studentParentNotes: p.studentParentNotes,
    cancelled: p.cancelled,
    hexColor: p.activity.hexColor,
    start: p.start,
    end: p.end,
    creatorUserId: p.creatorUserId,
    seriesId: p.seriesId,
    remindStaff,
    optional: p.optional,
    activityId: p.activity.id,
    locationId: p.locationId,
    teamIds: p.teamIds,
    extraStudentIds: extra,
    staffIds: p.staffIds,
    customFieldsData,
    teamCustomFieldsData,
    updatedAt,
    rosterIds,
  });
}

function customFieldsFor(
  d: SessionDraw,
  p: NewSession,
  rosterIds: number[],
): Pick<SSession, 'customFieldsData' | 'teamCustomFieldsData'> {
  const { sesRng } = d;
  const { tz } = d.basis;
  const aspec = d.frame.specOf.get(p.activity.id)!;
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
  return { customFieldsData, teamCustomFieldsData };
}

/** The teams' members at `at`, and the students put on directly. */
function rosterAt(d: SessionDraw, teamIds: number[], at: number, extra: number[]): number[] {
  const ids = new Set<number>();
  for (const t of teamIds) {
    for (const m of d.membersByTeam.get(t) ?? []) {
      if ((m.start === null || m.start <= at) && (m.end === null || m.end > at)) ids.add(m.studentId);
    }
  }
  for (const s of extra) ids.add(s);
  return [...ids];
}

/** Edited a little after a past session; at some point in the last 60 days for one to come. */
function sessionStamp(basis: Basis, end: number, r: Rng): number {
  if (end < basis.nowMs) return Math.min(basis.nowMs - MINUTE, end + r.int(1, 48) * HOUR);
  return basis.nowMs - r.int(1, 60 * 24) * HOUR;
}

/** One of every data type, with staff-only and guardian-visible audiences. */
export function makeCustomFields(): SCustomField[] {
  return [
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
}
