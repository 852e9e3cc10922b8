// Small, valid domain records for store tests. Each builder takes overrides for the fields a test cares about.
// writeAndFindSession is the smallest proof that a store writes and reads through its membership tables.
import { expect } from 'vitest';
import type {
  Activity,
  CustomFieldMeta,
  PreExplainedAbsence,
  Session,
  Student,
  StudentTeam,
  Team,
  TeamMember,
} from '../../src/domain/types.ts';
import type { RunStatus, Store } from '../../src/store/types.ts';

export function session(id: number, over: Partial<Session> = {}): Session {
  return {
    id,
    title: `Session ${id}`,
    notes: '',
    studentParentNotes: '',
    opponent: null,
    bye: false,
    cancelled: false,
    scored: false,
    hexColor: null,
    start: '2026-12-01T15:00:00.000Z',
    end: '2026-12-01T16:00:00.000Z',
    creatorUserId: null,
    seriesId: null,
    organisationScore: null,
    opponentScore: null,
    result: null,
    remindStaff: false,
    status: 'confirmed',
    optional: false,
    roundName: null,
    activity: { id: 1, name: 'Football', department: null, hexColor: null },
    location: null,
    teams: [],
    students: [],
    staff: [],
    customFieldsData: {},
    ...over,
  };
}

export function sessionTeam(id: number) {
  return { id, name: `Team ${id}`, category: null, subcategory: null, customFieldsData: {} };
}

export function sessionStaff(id: number) {
  return { id, firstName: 'Staff', lastName: `${id}`, sisId: null, externalId: null };
}

export function sessionStudent(id: number) {
  return { id };
}

export function member(studentId: number, over: Partial<TeamMember> = {}): TeamMember {
  return {
    studentId,
    firstName: 'Student',
    legalFirstName: null,
    lastName: `${studentId}`,
    smsId: null,
    yearGroup: null,
    boarder: false,
    captain: false,
    jerseyNumber: null,
    positionId: null,
    sortOrder: null,
    medicalConditions: [],
    guardians: [],
    ...over,
  };
}

export function team(id: number, studentIds: number[], over: Partial<Team> = {}): Team {
  return {
    id,
    name: `Team ${id}`,
    sisId: null,
    hidden: false,
    playersRanked: false,
    category: null,
    subcategory: null,
    activity: { id: 1, name: 'Football', sisCode: null, department: null },
    staff: [],
    students: studentIds.map((s) => member(s)),
    positions: [],
    studentSortType: null,
    ...over,
  };
}

export function student(id: number, over: Partial<Student> = {}): Student {
  return {
    id,
    firstName: 'Student',
    legalFirstName: null,
    lastName: `${id}`,
    sisId: null,
    secondarySisId: null,
    yearGroupId: null,
    current: true,
    ...over,
  };
}

export function absence(id: number, studentId: number, start: string, end: string): PreExplainedAbsence {
  return { id, studentId, start, end, explained: true, reason: 'Medical appointment' };
}

export function activity(id: number, name: string): Activity {
  return {
    id,
    name,
    code: null,
    emoji: null,
    archived: false,
    hexColor: null,
    smsCode: null,
    activityType: null,
    rollMode: null,
    department: null,
  };
}

export function studentTeam(id: number, studentId: number, teamId: number): StudentTeam {
  return { id, studentId, teamId, start: '2026-09-01T00:00:00.000Z', end: null };
}

export function customField(key: string, label: string): CustomFieldMeta {
  return { key, label, dataType: 'short-text', showToUserTypes: ['staff'], showAfterField: null };
}

/** A run's end with nothing counted (no records, upstream calls or errors), for tests about which run ended how. */
export function runEnd(status: Exclude<RunStatus, 'running'>, finishedAt: string) {
  return {
    status,
    finishedAt,
    counts: {},
    upstreamRequests: 0,
    retries: 0,
    throttled: 0,
    errors: [],
    warning: null,
  } satisfies Parameters<Store['runs']['finishRun']>[1];
}

export async function writeAndFindSession(store: Store): Promise<void> {
  await store.records.upsert(
    's',
    'sessions',
    [session(1, { students: [sessionStudent(7)] })],
    '2026-11-01T08:00:00.000Z',
  );
  expect((await store.records.listSessions('s', { studentId: 7 })).map((r) => r.id)).toEqual([1]);
}
