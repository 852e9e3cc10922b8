// The store's contract: what the rest of rostercal may ask of the snapshot and the bookkeeping tables.
// Two implementations (SQLite through node:sqlite, PostgreSQL through pg) satisfy it, verified by one
// contract test suite. Nothing outside src/store/ writes SQL.
import type {
  Activity,
  CustomFieldMeta,
  Department,
  Id,
  Instant,
  Location,
  PreExplainedAbsence,
  Session,
  StaffUser,
  Student,
  StudentTeam,
  Team,
  YearGroup,
} from '../domain/types.ts';

/** A school is the unit of tenancy: every row below belongs to one. Its id is the config's school id. */
export type SchoolId = string;

export interface ResourceMap {
  sessions: Session;
  teams: Team;
  students: Student;
  staff: StaffUser;
  absences: PreExplainedAbsence;
  activities: Activity;
  locations: Location;
  yearGroups: YearGroup;
  departments: Department;
  studentTeams: StudentTeam;
  customFields: CustomFieldMeta;
}
export type ResourceKind = keyof ResourceMap;

/** Bookkeeping the store adds to every snapshot record. */
export interface RecordMeta {
  /** When the store first saw the record. */
  createdAt: Instant;
  /** When its content last changed (as seen by a pull). */
  updatedAt: Instant;
  /** Starts at 0, +1 each time the content changes: ICS SEQUENCE. */
  version: number;
  /** Set when a full pull found the record gone upstream; such records are hidden unless asked for. */
  deletedAt: Instant | null;
}
export type Stored<K extends ResourceKind> = ResourceMap[K] & { meta: RecordMeta };

export interface UpsertStats {
  added: number;
  changed: number;
  unchanged: number;
  /** Previously deleted records that came back. */
  restored: number;
}

export interface SessionQuery {
  /** Sessions that intersect [from, to). */
  from?: Instant;
  to?: Instant;
  teamIds?: Id[];
  activityIds?: Id[];
  /** Sessions with this staff member assigned. */
  staffId?: Id;
  /** Sessions of the student's current teams plus sessions listing the student. */
  studentId?: Id;
  includeDeleted?: boolean;
}

export interface AbsenceQuery {
  studentIds?: Id[];
  /** Absences that intersect [from, to). */
  from?: Instant;
  to?: Instant;
}

export type RunKind = 'incremental' | 'full' | 'push';
export type RunStatus = 'running' | 'succeeded' | 'failed' | 'suspicious';

export interface RunCounts {
  added: number;
  changed: number;
  deleted: number;
  unchanged: number;
  skipped: number;
  /** push runs */
  created?: number;
  updated?: number;
  failed?: number;
}

export interface SyncRun {
  id: number;
  schoolId: SchoolId;
  kind: RunKind;
  /** For push runs: the target id. */
  target: string | null;
  status: RunStatus;
  startedAt: Instant;
  finishedAt: Instant | null;
  /** Counts per resource (pull) or per calendar (push). */
  counts: Record<string, RunCounts>;
  upstreamRequests: number;
  retries: number;
  throttled: number;
  /** Human-readable problems: skipped malformed records (with ids), guard trips, failures. */
  errors: string[];
  /** Why the run was marked suspicious, if it was. */
  warning: string | null;
}

export interface JobStatus {
  schoolId: SchoolId;
  job: string;
  lastStartedAt: Instant | null;
  lastFinishedAt: Instant | null;
  lastStatus: RunStatus | null;
  lastError: string | null;
  nextRunAt: Instant | null;
}

export type FeedScope = 'team' | 'student' | 'staff' | 'activity';

export interface FeedToken {
  schoolId: SchoolId;
  scope: FeedScope;
  scopeId: Id;
  /** sha256 (hex) of the secret token; the token itself is never stored or logged. */
  tokenHash: string;
  /** +1 on each rotation. */
  version: number;
  createdAt: Instant;
  revokedAt: Instant | null;
}

/** One remote calendar that a push target owns. */
export interface PushCalendar {
  schoolId: SchoolId;
  target: string;
  /** Our key for it, e.g. `team:12` or `staff:40`. */
  calendarKey: string;
  remoteCalendarId: string;
  /** Set after quota errors: skip until then. */
  pausedUntil: Instant | null;
  lastReconciledAt: Instant | null;
}

/** One event we believe exists in a remote calendar. */
export interface PushMapping {
  schoolId: SchoolId;
  target: string;
  calendarKey: string;
  sessionId: Id;
  remoteEventId: string;
  /** Hash of the projected event content last written. */
  contentHash: string;
  updatedAt: Instant;
}

export interface Store {
  readonly dialect: 'sqlite' | 'postgres';
  /** Applies pending migrations (idempotent; safe when several processes start at once); returns their names. */
  migrate(): Promise<string[]>;
  close(): Promise<void>;
  /** Health probe for /readyz. */
  ping(): Promise<void>;
  /** Runs fn atomically: everything it wrote is kept, or nothing is. */
  transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T>;

  // --- schools
  upsertSchool(school: { id: SchoolId; name: string; timeZone: string }): Promise<void>;
  listSchools(): Promise<{ id: SchoolId; name: string; timeZone: string }[]>;

  // --- snapshot writes (the pull)
  /** Insert or update by id; counts what really changed (by content). Clears deletedAt of returning records. */
  upsert<K extends ResourceKind>(
    schoolId: SchoolId,
    kind: K,
    records: ResourceMap[K][],
    at: Instant,
  ): Promise<UpsertStats>;
  /** Live (not deleted) ids of a kind; for sessions and absences optionally only those intersecting a window. */
  liveIds(schoolId: SchoolId, kind: ResourceKind, window?: { from: Instant; to: Instant }): Promise<Id[]>;
  markDeleted(schoolId: SchoolId, kind: ResourceKind, ids: Id[], at: Instant): Promise<number>;
  /** Monotonic per school; changes whenever any snapshot record changes. Feeds cache per data version. */
  dataVersion(schoolId: SchoolId): Promise<number>;

  // --- snapshot reads (projection, feeds, rosters, push)
  /** One record by id (custom fields by key); a deleted one only with includeDeleted. */
  get<K extends ResourceKind>(
    schoolId: SchoolId,
    kind: K,
    id: Id | string,
    opts?: { includeDeleted?: boolean },
  ): Promise<Stored<K> | null>;
  list<K extends ResourceKind>(
    schoolId: SchoolId,
    kind: K,
    opts?: { includeDeleted?: boolean },
  ): Promise<Stored<K>[]>;
  listSessions(schoolId: SchoolId, query: SessionQuery): Promise<Stored<'sessions'>[]>;
  listAbsences(schoolId: SchoolId, query: AbsenceQuery): Promise<Stored<'absences'>[]>;

  // --- sync runs and job status
  startRun(run: { schoolId: SchoolId; kind: RunKind; target?: string | null; at: Instant }): Promise<number>;
  finishRun(
    id: number,
    result: Omit<SyncRun, 'id' | 'schoolId' | 'kind' | 'target' | 'startedAt'> & { finishedAt: Instant },
  ): Promise<void>;
  listRuns(schoolId: SchoolId, opts?: { kind?: RunKind; limit?: number }): Promise<SyncRun[]>;
  /** Sync cursors, e.g. the `updatedAfter` high-water mark per resource. */
  getCursor(schoolId: SchoolId, key: string): Promise<string | null>;
  setCursor(schoolId: SchoolId, key: string, value: string): Promise<void>;
  saveJobStatus(status: JobStatus): Promise<void>;
  listJobStatus(schoolId?: SchoolId): Promise<JobStatus[]>;

  // --- feed tokens
  saveFeedToken(token: FeedToken): Promise<void>;
  /** The live (not revoked) token of a scope, if one was issued. */
  getFeedToken(schoolId: SchoolId, scope: FeedScope, scopeId: Id): Promise<FeedToken | null>;
  findFeedTokenByHash(tokenHash: string): Promise<FeedToken | null>;
  revokeFeedToken(schoolId: SchoolId, scope: FeedScope, scopeId: Id, at: Instant): Promise<void>;
  listFeedTokens(schoolId?: SchoolId): Promise<FeedToken[]>;

  // --- push bookkeeping
  savePushCalendar(cal: PushCalendar): Promise<void>;
  listPushCalendars(schoolId: SchoolId, target: string): Promise<PushCalendar[]>;
  upsertPushMappings(mappings: PushMapping[]): Promise<void>;
  deletePushMappings(
    schoolId: SchoolId,
    target: string,
    calendarKey: string,
    sessionIds: Id[],
  ): Promise<void>;
  listPushMappings(schoolId: SchoolId, target: string, calendarKey?: string): Promise<PushMapping[]>;

  // --- cross-replica coordination (PostgreSQL; SQLite is single-process)
  /** Claims one scheduled fire: true for exactly one caller per (job, fireTime). */
  claimFire(job: string, fireTime: Instant, owner: string): Promise<boolean>;
}
