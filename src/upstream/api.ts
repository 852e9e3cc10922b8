// The upstream client's public surface: what the pull, tests and benchmarks call.
// Parameter names are the spec's own (../shared/spec/extracurricular-data-service-api.md); array parameters are
// plain arrays here and stringified JSON on the wire. Results are the clean domain types of src/domain/types.ts.
import type {
  Activity,
  CustomFieldMeta,
  Department,
  Id,
  Location,
  PreExplainedAbsence,
  Session,
  StaffUser,
  Student,
  StudentTeam,
  Team,
  YearGroup,
} from '../domain/types.ts';
import type { ClockSample } from './clock.ts';
import type { OutageLimits } from './outage.ts';

/** A record the client could not understand: reported, skipped, and the rest of the page kept. */
export interface MalformedRecord {
  endpoint: string;
  id: string | null;
  reason: string;
}

export interface Page<T> {
  records: T[];
  skipped: MalformedRecord[];
  currentPage: number;
  lastPage: number;
  /** What the listing as a whole says it holds: a complete read receives exactly this many records. */
  numRecords: number;
  /** Records the page carried, malformed ones included: what is counted against `numRecords`. */
  received: number;
  /** The page length the server echoed (what was asked for; teams serve at most 50 whatever is asked). */
  pageLength?: number;
  /** Sessions only, when `includeCustomFieldsMetadata` was asked for. */
  customFieldsMetadata?: CustomFieldMeta[];
  /** The upstream's clock when it served the page (its `Date` header), when it said. */
  clock?: ClockSample;
}

export interface Paging {
  page?: number;
  /** Defaults to the client's page length for the endpoint (client.ts ENDPOINTS). */
  pageLength?: number;
}

export interface UpdatedRange {
  updatedBefore?: string;
  updatedAfter?: string;
}

export type FixtureStatusFilter = 'confirmed' | 'unconfirmed' | 'draft';

export interface SessionListParams extends Paging, UpdatedRange {
  activityIds?: Id[];
  departmentIds?: Id[];
  locationIds?: Id[];
  startDateTime?: string;
  endDateTime?: string;
  cancelled?: boolean;
  bye?: boolean;
  sisIds?: string[];
  teamId?: Id;
  scored?: boolean;
  includeStatuses?: FixtureStatusFilter[];
  includeTeams?: boolean;
  includeStaff?: boolean;
  includeRoundName?: boolean;
  includeSisIds?: boolean;
  includeCustomFieldsMetadata?: boolean;
  excludeSessionsWithTeams?: boolean;
}

export interface TeamListParams extends Paging, UpdatedRange {
  activityId?: Id;
  departmentIds?: Id[];
  categoryId?: Id;
  hidden?: boolean;
  includeStaff?: boolean;
  includeStudents?: boolean;
  includePositions?: boolean;
  sisIds?: string[];
  showAsOfDate?: string;
  userIds?: Id[];
}

export interface StudentListParams extends Paging {
  current?: boolean;
  sisIds?: string[];
}

export interface StudentTeamListParams extends Paging {
  activityId?: Id;
  studentIds?: Id[];
  startDateTime?: string;
  endDateTime?: string;
}

export type TimePeriod =
  | 'today'
  | 'yesterday'
  | 'last-week'
  | 'last-30-days'
  | 'last-90-days'
  | 'last-6-months'
  | 'this-year'
  | 'last-year'
  | 'custom';

export interface AttendanceListParams extends Paging, UpdatedRange {
  activityIds?: Id[];
  departmentIds?: Id[];
  studentSisIds?: string[];
  timePeriod?: TimePeriod;
  startDateTime?: string;
  endDateTime?: string;
  absent?: boolean;
  explained?: boolean;
}

export interface UserListParams extends Paging {
  activityIds?: Id[];
  departmentIds?: Id[];
  permissionTypes?: (0 | 1 | 2)[];
  frozen?: boolean;
}

export interface IncidentListParams extends Paging, UpdatedRange {
  activityIds?: Id[];
  departmentIds?: Id[];
  startDateTime?: string;
  endDateTime?: string;
  concussionStatus?: 'none' | 'potential' | 'confirmed';
  archived?: boolean;
}

export interface LocationListParams extends Paging {
  archived?: boolean;
}

export interface ActivityListParams extends Paging {
  departmentIds?: Id[];
}

export interface ActivitySelectionListParams extends Paging {
  activityIds?: Id[];
  departmentIds?: Id[];
  yearGroupIds?: Id[];
  seasonIds?: Id[];
  seasonActivityOptionIds?: string[];
  selectionDateStart?: string;
  selectionDateEnd?: string;
  invoiceStatus?: ('unpaid' | 'paid' | 'partially-paid' | 'processing')[];
  isDeleted?: boolean;
}

export interface AbsenceListParams extends Paging, UpdatedRange {
  studentIds?: Id[];
  explained?: boolean;
  startDateTime?: string;
  endDateTime?: string;
}

/** Attendance records, incidents and activity selections are read-only reports rostercal does not store. */
export interface AttendanceRecord {
  id: Id;
  absent: boolean;
  explained: boolean;
  comment: string | null;
  addedToRoll: boolean;
  studentId: Id;
  sessionId: Id;
  teamId: Id | null;
  updatedTimestamp: string | null;
}

export interface Incident {
  id: Id;
  location: string | null;
  studentId: Id;
  dateTime: string;
  concussionStatus: 'none' | 'potential' | 'confirmed';
  activityId: Id;
  sessionId: Id | null;
  archived: boolean;
}

export interface ActivitySelection {
  id: Id;
  selectedTimestamp: string;
  selectedByGuardianId: Id | null;
  onWaitlist: boolean;
  activityId: Id;
  seasonId: Id;
  studentId: Id;
  invoiceStatus: string | null;
}

export interface SessionWrite {
  title?: string;
  activityId?: Id;
  /** UTC; sent as `YYYY-MM-DD HH:mm:ss`. */
  startDateTime?: string;
  endDateTime?: string;
  teamIds?: Id[];
  studentIds?: Id[];
  staffIds?: Id[];
  notes?: string;
  studentParentNotes?: string;
  remindStaff?: boolean;
  optional?: boolean;
  locationId?: Id;
  locationName?: string;
}

export interface SessionWriteEnvelope {
  email: string;
  sendStaffNotifications?: boolean;
  sendStudentsAndGuardiansNotifications?: boolean;
  reasonForChange?: string;
}

export interface SessionPatch extends Omit<SessionWrite, 'locationId' | 'locationName'> {
  id: Id;
  cancelled?: boolean;
  /** A location id, or null to unassign. */
  location?: Id | null;
}

export interface UserWrite {
  sisId?: string | null;
  externalId?: string | null;
  secondaryExternalId?: string | null;
  firstName?: string;
  lastName?: string;
  email?: string;
  userType?: 'admin' | 'manager' | 'staff';
  departments?: Id[];
  activities?: Id[];
  payrollId?: string | null;
  mobileNumber?: string | null;
  activated?: boolean;
  payment?: 'ts' | 'na';
}

export interface UserWriteResult {
  id: Id;
  sisId: string | null;
  externalId: string | null;
  secondaryExternalId: string | null;
  firstName: string;
  lastName: string;
  email: string;
  userType: string;
  activated: boolean;
}

export interface AbsenceWrite {
  studentId: Id;
  /** UTC instant. */
  startDate: string;
  endDate: string;
  explained: boolean;
  reason: string;
}

export interface EndpointStats {
  requests: number;
  retries: number;
  throttled: number;
  errors: number;
}

export interface UpstreamClient {
  // Lists: each yields page by page, following `lastPage`.
  sessions(params?: SessionListParams): AsyncIterable<Page<Session>>;
  teams(params?: TeamListParams): AsyncIterable<Page<Team>>;
  students(params?: StudentListParams): AsyncIterable<Page<Student>>;
  studentTeams(params?: StudentTeamListParams): AsyncIterable<Page<StudentTeam>>;
  attendanceRecords(params?: AttendanceListParams): AsyncIterable<Page<AttendanceRecord>>;
  users(params?: UserListParams): AsyncIterable<Page<StaffUser>>;
  incidents(params?: IncidentListParams): AsyncIterable<Page<Incident>>;
  locations(params?: LocationListParams): AsyncIterable<Page<Location>>;
  departments(params?: Paging): AsyncIterable<Page<Department>>;
  yearGroups(params?: Paging): AsyncIterable<Page<YearGroup>>;
  activities(params?: ActivityListParams): AsyncIterable<Page<Activity>>;
  activitySelections(params?: ActivitySelectionListParams): AsyncIterable<Page<ActivitySelection>>;
  preExplainedAbsences(params?: AbsenceListParams): AsyncIterable<Page<PreExplainedAbsence>>;

  // Single reads: 404 throws NotFoundError.
  session(
    id: Id,
    params?: { includeTeams?: boolean; includeStaff?: boolean; includeCustomFieldsMetadata?: boolean },
  ): Promise<{ session: Session; customFieldsMetadata?: CustomFieldMeta[] }>;
  team(id: Id, params?: { showAsOfDate?: string }): Promise<Team>;
  /**
   * `GET /sessions?format=ics`: the calendar text. The service fixes the range (one month back, three ahead) and
   * the page length (200); `page` selects further pages.
   */
  sessionsIcs(params?: Omit<SessionListParams, keyof Paging> & { page?: number }): Promise<string>;

  // Writes: never retried blindly.
  createSessions(
    body: SessionWriteEnvelope & { sessions: SessionWrite[] },
  ): Promise<{ id: Id; locationId?: Id }[]>;
  updateSessions(body: SessionWriteEnvelope & { sessions: SessionPatch[] }): Promise<void>;
  deleteSessions(body: SessionWriteEnvelope & { sessionIds: Id[] }): Promise<void>;
  createUsers(body: { users: UserWrite[]; sendInviteEmail?: boolean }): Promise<UserWriteResult[]>;
  updateUsers(body: { users: (UserWrite & { id: Id })[] }): Promise<UserWriteResult[]>;
  createAbsences(absences: AbsenceWrite[]): Promise<PreExplainedAbsence[]>;
  updateAbsences(absences: (AbsenceWrite & { id: Id })[]): Promise<PreExplainedAbsence[]>;
  deleteAbsences(ids: Id[]): Promise<void>;

  /**
   * A run (a pull) begins: failures an earlier run met are forgotten, so every run tries the service afresh.
   * Within a run, reads that meet nothing but 5xx and timeouts end it within 90 s (UpstreamDownError; outage.ts).
   */
  beginRun(): void;

  /** Requests, retries, 429s and errors per endpoint (`GET /sessions`, `PATCH /users`, …) since creation. */
  stats(): Record<string, EndpointStats>;
  totals(): EndpointStats;
}

export interface RetryInfo {
  /** Stats key of the endpoint: `GET /sessions`. */
  endpoint: string;
  /** 1 for the first retry. */
  retry: number;
  /** How long the client waits before it. */
  waitMs: number;
  /** Status of the failed attempt; null for network failures and timeouts. */
  status: number | null;
  reason: string;
}

export interface UpstreamClientOptions {
  baseUrl: string;
  token: string;
  /** Client-side pacing so one school's sync never hammers the service. Default 20/s, 4 in flight. */
  rateLimit?: { requestsPerSecond: number; concurrency: number };
  /**
   * 429/5xx backoff: 1 s doubling to capMs (default 32 s), at most maxRetries (default 6). A Retry-After longer
   * than the scheduled wait is honoured, unless it exceeds maxRetryAfterMs (default 120 s): then the 429 is thrown
   * instead of waited out.
   */
  backoff?: { baseMs?: number; capMs?: number; maxRetries?: number; maxRetryAfterMs?: number };
  /** Per attempt, response body included. Default 30 s. */
  timeoutMs?: number;
  /**
   * Listing pages asked for ahead of the one being handled (default 2, never past the last page): the server
   * then works while this process validates and the caller stores, and round trips overlap. 0: one request per
   * page, each when the page before it has been handled.
   */
  pagesAhead?: number;
  /** Called for each malformed record skipped. */
  onMalformed?: (record: MalformedRecord) => void;
  /** Called before each retry (for logs and progress); never sees the token. */
  onRetry?: (info: RetryInfo) => void;
  /** Injected waiting, for tests (fake timers or recorded waits). Default: a real timer. */
  sleep?: (ms: number) => Promise<void>;
  /** Injected clock (ms since epoch) for the rate limiter and Retry-After dates. Default `Date.now`. */
  now?: () => number;
  /** Sent as User-Agent. Default `rostercal`. */
  userAgent?: string;
  /** When reads that meet only 5xx and timeouts mean the service is down (outage.ts; for tests). */
  outage?: OutageLimits;
}
