// The 13 list endpoints: filters per the spec, each with its default and maximum page length.
import type { SSession } from './model.ts';
import { badRequest, keepUpdated, type Query } from './query.ts';
import { activeAt, type SandboxState } from './state.ts';
import { addMonths, DAY } from './time.ts';
import * as wire from './wire.ts';

type Json = Record<string, unknown>;

export interface Listing<T = unknown> {
  records: readonly T[];
  toWire(record: T): Json;
  /** Fields beside `data` and `pagination` (sessions' `customFieldsMetadata`). */
  top?: Json;
  /** Incidents and activities carry `next`/`previous` (null) in the envelope. */
  nextPrevious?: boolean;
  /**
   * When set, a record's wire JSON depends only on the record, this shape key and the state version (not on
   * the clock), so the server may keep its serialised text.
   */
  shapeKey?: string;
}

export interface ListEndpoint {
  path: string;
  defaultLength: number;
  maxLength: number;
  list(st: SandboxState, q: Query): Listing;
}

// Each endpoint's Listing has its own record type; the server only pages them, so they are erased here.
const endpoint = <T>(e: {
  path: string;
  defaultLength: number;
  maxLength: number;
  list(st: SandboxState, q: Query): Listing<T>;
}) => e as unknown as ListEndpoint;

function listing<T>(
  records: readonly T[],
  toWire: (record: T) => Json,
  extra: Omit<Listing<T>, 'records' | 'toWire'> = {},
): Listing<T> {
  return { records, toWire, ...extra };
}

const inSet = <T>(values: T[] | undefined) => (values === undefined ? undefined : new Set(values));

export const SESSION_STATUSES = ['confirmed', 'unconfirmed', 'draft'] as const;

export interface SessionQuery {
  records: SSession[];
  shape: wire.SessionShape;
  includeCustomFieldsMetadata: boolean;
}

/** Filters sessions for `GET /sessions` (JSON and iCalendar). `fixedRange` is the iCalendar window. */
export function querySessions(
  st: SandboxState,
  q: Query,
  fixedRange?: { start: number; end: number },
): SessionQuery {
  const now = st.now();
  const teamId = q.int('teamId');
  const asked = q.range('startDateTime', 'endDateTime');
  const range = fixedRange ??
    asked ?? {
      start: now - 28 * DAY,
      end: teamId === undefined ? now + 28 * DAY : addMonths(now, 6),
    };
  const activityIds = inSet(q.numArray('activityIds'));
  const departmentIds = inSet(q.numArray('departmentIds'));
  const locationIds = inSet(q.numArray('locationIds'));
  const cancelled = q.bool('cancelled');
  const bye = q.bool('bye');
  const sisIds = q.strArray('sisIds');
  const scored = q.bool('scored');
  const statuses = inSet(q.enumArray('includeStatuses', SESSION_STATUSES));
  const excludeWithTeams = q.bool('excludeSessionsWithTeams') ?? false;
  const updated = q.updated();
  const includeSisIds = q.bool('includeSisIds') ?? false;
  const shape: wire.SessionShape = {
    single: false,
    includeTeams: q.bool('includeTeams') ?? false,
    includeStaff: q.bool('includeStaff') ?? false,
    includeRoundName: q.bool('includeRoundName') ?? false,
  };
  const includeCustomFieldsMetadata = q.bool('includeCustomFieldsMetadata') ?? fixedRange !== undefined;

  let sisStudentIds: Set<number> | undefined;
  if (sisIds) {
    sisStudentIds = new Set();
    for (const sis of sisIds) {
      const p = st.studentsBySis.get(sis);
      if (p) sisStudentIds.add(p.id);
    }
    if (includeSisIds) shape.matchSisIds = new Set(sisIds);
  }

  const list = st.school.sessions;
  const records: SSession[] = [];
  // Sessions intersecting [start, end): start < end of range and end > start of range.
  for (let i = st.firstSessionFrom(range.start - st.maxSessionDuration); i < list.length; i++) {
    const s = list[i]!;
    if (s.start >= range.end) break;
    if (s.end <= range.start) continue;
    if (activityIds && !activityIds.has(s.activityId)) continue;
    if (departmentIds) {
      const a = st.activities.get(s.activityId);
      if (!a || !departmentIds.has(a.departmentId)) continue;
    }
    if (locationIds && (s.locationId === null || !locationIds.has(s.locationId))) continue;
    if (cancelled !== undefined && s.cancelled !== cancelled) continue;
    if (bye !== undefined && s.bye !== bye) continue;
    if (teamId !== undefined && !s.teamIds.includes(teamId)) continue;
    if (scored !== undefined && s.scored !== scored) continue;
    if (statuses && !statuses.has(s.status)) continue;
    if (excludeWithTeams && s.teamIds.length > 0) continue;
    if (!keepUpdated(s.updatedAt, updated)) continue;
    if (sisStudentIds && !s.rosterIds.some((id) => sisStudentIds.has(id))) continue;
    records.push(s);
  }
  return { records, shape, includeCustomFieldsMetadata };
}

const sessions = endpoint({
  path: '/sessions',
  defaultLength: 100,
  maxLength: 1000,
  list(st, q) {
    const { records, shape, includeCustomFieldsMetadata } = querySessions(st, q);
    const shapeKey = [
      shape.includeTeams,
      shape.includeStaff,
      shape.includeRoundName,
      shape.matchSisIds ? [...shape.matchSisIds].sort().join('\u0000') : '',
    ].join('|');
    return {
      records,
      shapeKey,
      toWire: (s: SSession) => wire.session(st, s, shape),
      top: includeCustomFieldsMetadata ? { customFieldsMetadata: wire.customFieldsMetadata(st) } : undefined,
    };
  },
});

const teams = endpoint({
  path: '/teams',
  defaultLength: 15,
  maxLength: 50,
  list(st, q) {
    const now = st.now();
    const activityId = q.int('activityId');
    const departmentIds = inSet(q.numArray('departmentIds'));
    const categoryId = q.int('categoryId');
    const hidden = q.bool('hidden') ?? false;
    const sisIds = q.strArray('sisIds');
    const userIds = inSet(q.numArray('userIds'));
    const asOf = q.instant('showAsOfDate') ?? now;
    const updated = q.updated();
    const shape: wire.TeamShape = {
      single: false,
      includeStaff: q.bool('includeStaff') ?? false,
      includeStudents: q.bool('includeStudents') ?? false,
      includePositions: q.bool('includePositions') ?? false,
      asOf,
      now,
    };
    let teamsOfStudents: Set<number> | undefined;
    if (sisIds) {
      teamsOfStudents = new Set();
      for (const sis of sisIds) {
        const p = st.studentsBySis.get(sis);
        for (const m of p ? (st.membershipsByStudent.get(p.id) ?? []) : []) {
          if (activeAt(m, asOf)) teamsOfStudents.add(m.teamId);
        }
      }
    }
    const records = st.school.teams.filter((t) => {
      if (t.hidden !== hidden) return false;
      if (activityId !== undefined && t.activityId !== activityId) return false;
      if (departmentIds && !departmentIds.has(st.activities.get(t.activityId)?.departmentId ?? -1))
        return false;
      if (categoryId !== undefined && t.categoryId !== categoryId) return false;
      if (teamsOfStudents && !teamsOfStudents.has(t.id)) return false;
      if (userIds && !t.staff.some((s) => userIds.has(s.userId) && activeAt(s, asOf))) return false;
      return keepUpdated(t.updatedAt, updated);
    });
    return listing(records, (t) => wire.team(st, t, shape));
  },
});

const students = endpoint({
  path: '/students',
  defaultLength: 100,
  maxLength: 200,
  list(st, q) {
    const current = q.bool('current') ?? true;
    const sisIds = inSet(q.strArray('sisIds'));
    const records = st.school.students.filter(
      (s) => s.current === current && (sisIds === undefined || sisIds.has(s.sisId)),
    );
    return listing(records, wire.student);
  },
});

const studentTeams = endpoint({
  path: '/student-teams',
  defaultLength: 100,
  maxLength: 300,
  list(st, q) {
    const activityId = q.int('activityId');
    const studentIds = inSet(q.numArray('studentIds'));
    const range = q.range('startDateTime', 'endDateTime');
    const records = st.school.memberships.filter((m) => {
      if (studentIds && !studentIds.has(m.studentId)) return false;
      if (activityId !== undefined && st.teams.get(m.teamId)?.activityId !== activityId) return false;
      if (range) {
        if (m.start !== null && m.start >= range.end) return false;
        if (m.end !== null && m.end <= range.start) return false;
      }
      return true;
    });
    return listing(records, (m) => wire.studentTeam(st, m));
  },
});

export const TIME_PERIODS = [
  'today',
  'yesterday',
  'last-week',
  'last-30-days',
  'last-90-days',
  'last-6-months',
  'this-year',
  'last-year',
  'custom',
] as const;

/** The window of an attendance `timePeriod`; the default period (no period, or `custom` without a range) is the last 30 days. */
export function attendancePeriod(
  period: (typeof TIME_PERIODS)[number] | undefined,
  range: { start: number; end: number } | undefined,
  now: number,
): { start: number; end: number } {
  const today = Math.floor(now / DAY) * DAY;
  const year = new Date(now).getUTCFullYear();
  switch (period) {
    case 'today':
      return { start: today, end: today + DAY };
    case 'yesterday':
      return { start: today - DAY, end: today };
    case 'last-week':
      return { start: now - 7 * DAY, end: now };
    case 'last-30-days':
      return { start: now - 30 * DAY, end: now };
    case 'last-90-days':
      return { start: now - 90 * DAY, end: now };
    case 'last-6-months':
      return { start: addMonths(now, -6), end: now };
    case 'this-year':
      return { start: Date.UTC(year, 0, 1), end: Date.UTC(year + 1, 0, 1) };
    case 'last-year':
      return { start: Date.UTC(year - 1, 0, 1), end: Date.UTC(year, 0, 1) };
    default:
      return range ?? { start: now - 30 * DAY, end: now };
  }
}

const attendanceRecords = endpoint({
  path: '/attendance-records',
  defaultLength: 30,
  maxLength: 300,
  list(st, q) {
    const activityIds = inSet(q.numArray('activityIds'));
    const departmentIds = inSet(q.numArray('departmentIds'));
    const sisIds = q.strArray('studentSisIds');
    const period = q.oneOf('timePeriod', TIME_PERIODS);
    const range = q.range('startDateTime', 'endDateTime');
    const window = attendancePeriod(period, range, st.now());
    const absent = q.bool('absent');
    const explained = q.bool('explained');
    const updated = q.updated();
    const studentIds = sisIds
      ? new Set(sisIds.flatMap((s) => (st.studentsBySis.has(s) ? [st.studentsBySis.get(s)!.id] : [])))
      : undefined;
    const records = st.school.attendanceRecords.filter((r) => {
      const s = st.sessions.get(r.sessionId);
      if (!s || s.start >= window.end || s.end <= window.start) return false;
      if (activityIds && !activityIds.has(s.activityId)) return false;
      if (departmentIds && !departmentIds.has(st.activities.get(s.activityId)?.departmentId ?? -1))
        return false;
      if (studentIds && !studentIds.has(r.studentId)) return false;
      if (absent !== undefined && r.absent !== absent) return false;
      if (explained !== undefined && (!r.absent || r.explained !== explained)) return false;
      return keepUpdated(r.updatedAt, updated);
    });
    return listing(records, (r) => wire.attendanceRecord(st, r), { shapeKey: 'attendance' });
  },
});

const users = endpoint({
  path: '/users',
  defaultLength: 100,
  maxLength: 200,
  list(st, q) {
    const activityIds = inSet(q.numArray('activityIds'));
    const departmentIds = inSet(q.numArray('departmentIds'));
    const permissionTypes = q.numArray('permissionTypes');
    for (const p of permissionTypes ?? []) {
      if (p !== 0 && p !== 1 && p !== 2)
        throw badRequest(`permissionTypes items must be 0, 1 or 2, found ${p}`);
    }
    const perms = inSet(permissionTypes);
    const frozen = q.bool('frozen');
    const records = st.school.users.filter((u) => {
      if (frozen !== undefined && u.frozen !== frozen) return false;
      if (perms && !perms.has(u.isAdmin ? 2 : u.isManager ? 1 : 0)) return false;
      if (activityIds && !u.activityIds.some((id) => activityIds.has(id))) return false;
      if (departmentIds) {
        const within =
          u.departmentIds.some((id) => departmentIds.has(id)) ||
          u.activityIds.some((id) => departmentIds.has(st.activities.get(id)?.departmentId ?? -1));
        if (!within) return false;
      }
      return true;
    });
    return listing(records, (u) => wire.user(st, u));
  },
});

const CONCUSSION = ['none', 'potential', 'confirmed'] as const;

const incidents = endpoint({
  path: '/incidents',
  defaultLength: 100,
  maxLength: 200,
  list(st, q) {
    const activityIds = inSet(q.numArray('activityIds'));
    const departmentIds = inSet(q.numArray('departmentIds'));
    const range = q.range('startDateTime', 'endDateTime');
    const concussion = q.oneOf('concussionStatus', CONCUSSION);
    const archived = q.bool('archived');
    const updated = q.updated();
    const records = st.school.incidents.filter((i) => {
      if (activityIds && !activityIds.has(i.activityId)) return false;
      if (departmentIds && !departmentIds.has(st.activities.get(i.activityId)?.departmentId ?? -1))
        return false;
      if (range && (i.dateTime < range.start || i.dateTime > range.end)) return false;
      if (concussion !== undefined && i.concussionStatus !== concussion) return false;
      if (archived !== undefined && i.archived !== archived) return false;
      return keepUpdated(i.updatedAt, updated);
    });
    return listing(records, (i) => wire.incident(st, i), { nextPrevious: true });
  },
});

const locations = endpoint({
  path: '/locations',
  defaultLength: 100,
  maxLength: 200,
  list(st, q) {
    const archived = q.bool('archived') ?? false;
    const records = st.school.locations.filter((l) => !l.association && l.archived === archived);
    return listing(records, wire.location);
  },
});

const departments = endpoint({
  path: '/departments',
  defaultLength: 100,
  maxLength: 200,
  list(st) {
    return listing(st.school.departments, (d) => ({ id: d.id, name: d.name }));
  },
});

const yearGroups = endpoint({
  path: '/year-groups',
  defaultLength: 100,
  maxLength: 200,
  list(st) {
    const records = [...st.school.yearGroups].sort((a, b) => a.id - b.id);
    return listing(records, (y) => ({ id: y.id, name: y.name, archived: y.archived }));
  },
});

const activities = endpoint({
  path: '/activities',
  defaultLength: 100,
  maxLength: 200,
  list(st, q) {
    const departmentIds = inSet(q.numArray('departmentIds'));
    const records = st.school.activities.filter((a) => !departmentIds || departmentIds.has(a.departmentId));
    return listing(records, (a) => wire.activity(st, a), { nextPrevious: true });
  },
});

const INVOICE_STATUSES = ['unpaid', 'paid', 'partially-paid', 'processing'] as const;

/** `selectionDateEnd` is inclusive: a bare date covers that whole day. */
function dayEnd(q: Query, name: string): number | undefined {
  const v = q.str(name);
  const ms = q.instant(name);
  if (v === undefined || ms === undefined) return undefined;
  return /^\d{4}-\d{2}-\d{2}$/.test(v.trim()) ? ms + DAY - 1 : ms;
}

const activitySelections = endpoint({
  path: '/activity-selections',
  defaultLength: 100,
  maxLength: 200,
  list(st, q) {
    const activityIds = inSet(q.numArray('activityIds'));
    const departmentIds = inSet(q.numArray('departmentIds'));
    const yearGroupIds = inSet(q.numArray('yearGroupIds'));
    const seasonIds = inSet(q.numArray('seasonIds'));
    const optionIds = inSet(q.strArray('seasonActivityOptionIds'));
    const from = q.instant('selectionDateStart');
    const to = dayEnd(q, 'selectionDateEnd');
    const invoice = inSet(q.enumArray('invoiceStatus', INVOICE_STATUSES));
    const deleted = q.bool('isDeleted') ?? false;
    const records = st.school.activitySelections.filter((x) => {
      if (x.deleted !== deleted) return false;
      if (activityIds && !activityIds.has(x.activityId)) return false;
      if (departmentIds && !departmentIds.has(st.activities.get(x.activityId)?.departmentId ?? -1))
        return false;
      if (yearGroupIds && !yearGroupIds.has(st.students.get(x.studentId)?.yearGroupId ?? -1)) return false;
      if (seasonIds && !seasonIds.has(x.seasonId)) return false;
      if (optionIds && (x.seasonActivityOptionId === null || !optionIds.has(x.seasonActivityOptionId)))
        return false;
      if (from !== undefined && x.selectedTimestamp < from) return false;
      if (to !== undefined && x.selectedTimestamp > to) return false;
      if (invoice && !invoice.has(x.invoice.status)) return false;
      return true;
    });
    return listing(records, (x) => wire.activitySelection(st, x));
  },
});

const preExplainedAbsences = endpoint({
  path: '/pre-explained-absences',
  defaultLength: 100,
  maxLength: 200,
  list(st, q) {
    const studentIds = inSet(q.numArray('studentIds'));
    const explained = q.bool('explained');
    const range = q.range('startDateTime', 'endDateTime');
    const updated = q.updated();
    const records = st.school.absences.filter((a) => {
      if (studentIds && !studentIds.has(a.studentId)) return false;
      if (explained !== undefined && a.explained !== explained) return false;
      if (range && (a.start >= range.end || a.end <= range.start)) return false;
      return keepUpdated(a.updatedAt, updated);
    });
    return listing(records, wire.absence);
  },
});

export const LIST_ENDPOINTS: readonly ListEndpoint[] = [
  sessions,
  teams,
  students,
  studentTeams,
  attendanceRecords,
  users,
  incidents,
  locations,
  departments,
  yearGroups,
  activities,
  activitySelections,
  preExplainedAbsences,
];
