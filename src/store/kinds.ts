// How each resource kind maps onto its snapshot table: its key, the indexed columns derived from the record,
// and the membership rows it owns.
import type { Id } from '../domain/types.ts';
import { sha256, stableStringify } from '../util/stable-json.ts';
import type { JoinTableName, SnapshotExtras, SnapshotTableName } from './schema.ts';
import type { PreparedRecord, ResourceKind, ResourceMap } from './types.ts';

export interface JoinSpec<R> {
  table: JoinTableName;
  owner: 'session_id' | 'team_id';
  member: 'team_id' | 'staff_id' | 'student_id';
  members(record: R): Id[];
}

export interface KindSpec<R> {
  table: SnapshotTableName;
  key(record: R): Id | string;
  /** Indexed columns written alongside the JSON. */
  extras(record: R): Partial<SnapshotExtras>;
  /** Which extras columns this kind writes (the same for every record, so multi-row inserts line up). */
  extraColumns: (keyof SnapshotExtras)[];
  /** Kinds with a time window (start_at/end_at): liveIds and queries can restrict to a window. */
  windowed: boolean;
  joins: JoinSpec<R>[];
}

type Specs = { [K in ResourceKind]: KindSpec<ResourceMap[K]> };

const plain = <R extends { id: Id }>(table: SnapshotTableName): KindSpec<R> => ({
  table,
  key: (r) => r.id,
  extras: () => ({}),
  extraColumns: [],
  windowed: false,
  joins: [],
});

export const KINDS: Specs = {
  sessions: {
    table: 'sessions',
    key: (r) => r.id,
    extras: (r) => ({
      start_at: r.start,
      end_at: r.end,
      activity_id: r.activity.id,
      cancelled: r.cancelled ? 1 : 0,
    }),
    extraColumns: ['start_at', 'end_at', 'activity_id', 'cancelled'],
    windowed: true,
    joins: [
      {
        table: 'session_teams',
        owner: 'session_id',
        member: 'team_id',
        members: (r) => r.teams.map((t) => t.id),
      },
      {
        table: 'session_staff',
        owner: 'session_id',
        member: 'staff_id',
        members: (r) => r.staff.map((s) => s.id),
      },
      {
        table: 'session_students',
        owner: 'session_id',
        member: 'student_id',
        members: (r) => r.students.map((s) => s.id),
      },
    ],
  },
  teams: {
    table: 'teams',
    key: (r) => r.id,
    extras: (r) => ({ activity_id: r.activity.id }),
    extraColumns: ['activity_id'],
    windowed: false,
    joins: [
      {
        table: 'team_students',
        owner: 'team_id',
        member: 'student_id',
        members: (r) => r.students.map((s) => s.studentId),
      },
    ],
  },
  students: {
    table: 'students',
    key: (r) => r.id,
    extras: (r) => ({ year_group_id: r.yearGroupId }),
    extraColumns: ['year_group_id'],
    windowed: false,
    joins: [],
  },
  staff: plain('staff'),
  absences: {
    table: 'absences',
    key: (r) => r.id,
    extras: (r) => ({ student_id: r.studentId, start_at: r.start, end_at: r.end }),
    extraColumns: ['student_id', 'start_at', 'end_at'],
    windowed: true,
    joins: [],
  },
  activities: plain('activities'),
  locations: plain('locations'),
  yearGroups: plain('year_groups'),
  departments: plain('departments'),
  studentTeams: {
    table: 'student_teams',
    key: (r) => r.id,
    extras: (r) => ({ student_id: r.studentId, team_id: r.teamId, start_at: r.start, end_at: r.end }),
    extraColumns: ['student_id', 'team_id', 'start_at', 'end_at'],
    windowed: false,
    joins: [],
  },
  customFields: {
    table: 'custom_fields',
    key: (r) => r.key,
    extras: () => ({}),
    extraColumns: [],
    windowed: false,
    joins: [],
  },
};

export function kindSpec<K extends ResourceKind>(kind: K): KindSpec<ResourceMap[K]> {
  const spec = KINDS[kind];
  if (!spec) throw new Error(`unknown resource kind: ${String(kind)}`);
  return spec;
}

export function contentHash(text: string): string {
  return sha256(text, 'base64url');
}

/** Makes a record ready for the store (see PreparedRecord in types.ts). */
export function prepareRecord<K extends ResourceKind>(kind: K, record: ResourceMap[K]): PreparedRecord {
  const spec = kindSpec(kind);
  const data = stableStringify(record);
  return {
    key: spec.key(record),
    data,
    hash: contentHash(data),
    extras: spec.extras(record),
    members: membersOf(spec, record),
  };
}

/** The membership rows a record owns, per join of its kind (spec.joins order), each member once. */
export function membersOf<R>(spec: KindSpec<R>, record: R): Id[][] {
  return spec.joins.map((j) => [...new Set(j.members(record))]);
}
