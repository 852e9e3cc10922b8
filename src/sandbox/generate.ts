// Generates a deterministic, realistic school for a (seed, scale, now): the same inputs give the same school.
// Everything random comes from the seeded Rng; nothing reads the real clock.
//
// Each part (school/) draws from a generator of its own, forked from the seed's in a fixed order: a part may
// change what it draws without changing the others, but the forks must stay in this order (a fork draws from
// the seed's generator). `node bench/sandbox-hash.ts` prints a digest of several schools to compare before/after.

import type { Scale, School } from './model.ts';
import { Rng } from './prng.ts';
import { basisFor, SCALES, SCHOOL_TIME_ZONE } from './school/basis.ts';
import { makeAbsences, makeSeasons, makeSelections } from './school/choices.ts';
import { makeStaff, makeStudents } from './school/people.ts';
import { makeFrame, makeVenues } from './school/places.ts';
import {
  makeAttendance,
  makeAttendanceFlags,
  makeIncidents,
  makeIncidentTemplate,
} from './school/records.ts';
import { makeCustomFields, makeSessions } from './school/sessions.ts';
import { makeTeams } from './school/teams.ts';

export { SCHOOL_TIME_ZONE };

export const SCALE_NAMES = Object.keys(SCALES) as Scale[];

export function generateSchool(
  seed = 1,
  scale: Scale = 'small',
  now: string | number | Date = Date.UTC(2026, 2, 2),
  calendar: { holidays: boolean } = { holidays: true },
): School {
  const spec = SCALES[scale];
  if (!spec) throw new Error(`unknown scale: ${String(scale)} (small, school or district)`);
  const nowMs = typeof now === 'number' ? now : new Date(now).getTime();
  if (Number.isNaN(nowMs)) throw new Error(`invalid now: ${String(now)}`);
  const rng = new Rng(seed);
  const basis = basisFor(spec, nowMs, calendar.holidays);

  const frame = makeFrame(basis, rng.fork(1));
  const { locations, awayVenue } = makeVenues(rng.fork(2), frame.organisations);
  const users = makeStaff(basis, rng.fork(3), frame.departments);
  const students = makeStudents(basis, rng.fork(4), frame.yearGroups);
  const squads = makeTeams(basis, rng.fork(5), frame, users, students);
  const sessions = makeSessions(basis, rng.fork(6), frame, { locations, awayVenue }, squads, users, students);
  const attendanceRecords = makeAttendance(basis, rng.fork(7), sessions);
  const incidents = makeIncidents(basis, rng.fork(8), sessions, frame.specOf);
  const seasons = makeSeasons(basis, frame.liveActivities);
  const activitySelections = makeSelections(basis, rng.fork(9), students, seasons, frame.liveActivities);
  const absences = makeAbsences(basis, rng.fork(10), students);

  return {
    seed,
    scale,
    now: new Date(nowMs).toISOString(),
    timeZone: basis.tz,
    organisation: frame.organisation,
    organisations: frame.organisations,
    departments: frame.departments,
    yearGroups: frame.yearGroups,
    activities: frame.activities,
    categories: frame.categories,
    locations,
    users,
    students,
    teams: squads.teams,
    memberships: squads.memberships,
    customFields: makeCustomFields(),
    sessions,
    attendanceFlags: makeAttendanceFlags(),
    attendanceRecords,
    incidentTemplate: makeIncidentTemplate(),
    incidents,
    seasons,
    activitySelections,
    absences,
  };
}
