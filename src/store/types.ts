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
import type { FireQueue, PullTurns, PushTurns } from './fire-queue.ts';
import type { PushFence } from './lease-fence.ts';

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

/**
 * A record made ready for the store (prepareRecord in kinds.ts): its key, stable JSON, hash, indexed columns and
 * membership rows. Made while the pull still waits on the network, so the write transaction only compares
 * hashes and runs bulk statements; and it is all the pull holds of a record (strings, not the parsed object).
 */
export interface PreparedRecord {
  key: Id | string;
  data: string;
  hash: string;
  /** Indexed columns (start_at, team_id, …) by column name. */
  extras: Readonly<Record<string, string | number | null>>;
  /** Member ids per join table of the kind, in the order of its spec's joins (deduplicated). */
  members: Id[][];
}

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
/** `interrupted`: the process running it stopped (killed, crashed, or stopped before the run could end). */
export type RunStatus = 'running' | 'succeeded' | 'failed' | 'suspicious' | 'interrupted';

export interface RunCounts {
  added: number;
  changed: number;
  deleted: number;
  unchanged: number;
  skipped: number;
  /** Left out by this complete full listing for the first time (no single read to ask): kept until the next. */
  pending?: number;
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
  /** The process that ran (or runs) it, `host:pid:random`; null for runs recorded before owners were. */
  owner?: string | null;
  /**
   * A pull's measure of the upstream's clock: its `Date` headers minus this server's clock (ms; positive: the
   * upstream's is ahead). Null when no answer carried a `Date`, for push runs, and for runs recorded before it was.
   */
  upstreamSkewMs?: number | null;
}

/** A running run's counts so far (see Store.recordRunProgress). */
export type RunProgress = Pick<SyncRun, 'counts' | 'upstreamRequests' | 'retries' | 'throttled'>;

/** A process that runs pulls or pushes; it proves it is alive by beating (`Store.beat`). */
export interface RunOwner {
  /** `host:pid:random`. */
  id: string;
  host: string;
  pid: number;
  startedAt: Instant;
}

export type PullLeaseHolder = { owner: string; since: Instant; turn: string; gone: boolean };
export type PullLease =
  | { acquired: true; token: string; fence: number }
  | { acquired: false; holder: { owner: string; since: Instant; token: string } };

/** How a scheduled job's fire ended: a run's status, or `skipped` (it let the fire pass, and said why). */
export type JobResult = RunStatus | 'skipped';

export interface JobStatus {
  schoolId: SchoolId;
  job: string;
  lastStartedAt: Instant | null;
  lastFinishedAt: Instant | null;
  lastStatus: JobResult | null;
  lastError: string | null;
  nextRunAt: Instant | null;
  /** The process that started the last run (`host:pid:random`, as it beats in the store). */
  owner?: string | null;
  /** The last fire let pass without running, and why. */
  lastSkippedAt?: Instant | null;
  lastSkipReason?: string | null;
  /**
   * Read only, worked out on reading: a start not yet finished is `running` while its owner beats and
   * `interrupted` once it has gone silent (its replica died); null when the last start finished.
   */
  state?: 'running' | 'interrupted' | null;
}

/** What a save changes: the fields given (undefined ones are left as they are). */
export type JobStatusPatch = Pick<JobStatus, 'schoolId' | 'job'> &
  Partial<Omit<JobStatus, 'schoolId' | 'job' | 'state'>>;

export type FeedScope = 'team' | 'student' | 'staff' | 'activity';
/** A feed's scope as rendered feeds and event versions are kept: a family link's calendar is one too. */
export type StoredFeedScope = FeedScope | 'family';

/** A rotation in the store's copy of the rotation record: the feed's version after it. */
export interface FeedRotationRow {
  school: SchoolId;
  scope: FeedScope;
  id: Id;
  version: number;
  at: Instant;
}

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

/** An event as a feed last published it: the hash of what its audience saw, and the SEQUENCE and LAST-MODIFIED. */
export interface PublishedEvent {
  hash: string;
  sequence: number;
  lastModified: Instant;
}

/** A feed as last rendered: compressed bytes, validators, and what it was made from. */
export interface RenderedFeedRecord {
  schoolId: SchoolId;
  scope: StoredFeedScope;
  scopeId: Id;
  dataVersion: number;
  windowKey: string;
  inputs: string;
  etag: string;
  /** When these bytes (this ETag) were first served: kept across re-renders and restarts while the ETag holds. */
  lastModified: Instant;
  gzip: Buffer;
  br: Buffer | null;
  eventCount: number;
  trimmed: number;
  /** JSON array of CalendarEvent. */
  upcoming: string;
  /** JSON of the FeedDef the bytes were made for (a current render is served without reading the subject). */
  def: string;
  renderedAt: Instant;
}

export type RenderedFeedState = Pick<
  RenderedFeedRecord,
  'scope' | 'scopeId' | 'dataVersion' | 'windowKey' | 'inputs' | 'etag' | 'lastModified' | 'renderedAt'
>;

/** Whom a calendar is of, as an admin may know them: for the admins' search. */
export interface CalendarSubject {
  scope: FeedScope;
  id: Id;
  /** The name as the calendar shows it (a person's first and last name). */
  name: string;
  /** Other names the school has for them (a student's legal first name with the surname). */
  otherNames: string[];
  /** Ids an admin may have from elsewhere: a student's SIS ids, a staff member's e-mail and SIS id. */
  knownIds: string[];
}

/** A feed that is part of a family link, named by its capability's hash (see FamilyLink). */
export interface FamilyMember {
  scope: FeedScope;
  scopeId: Id;
  /** sha256 of the member feed's token when the link was made: once that URL is rotated the member drops out. */
  feedTokenHash: string;
}

/** One link for a family: several feeds (children, teams) behind one capability of its own. */
export interface FamilyLink {
  schoolId: SchoolId;
  /** sha256 (hex) of the link's secret token; the token itself is never stored. */
  tokenHash: string;
  members: FamilyMember[];
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

/**
 * A signed-in member of staff (OpenID Connect). Only the sha256 of the session id is stored, so a copy of the
 * database does not let anyone in. Who the person is and what they may see is re-derived from the snapshot
 * (their upstream staff record) on every request, so upstream changes apply at the next pull.
 */
export interface StaffSession {
  /** sha256 (hex) of the session id held in the cookie. */
  idHash: string;
  /** The verified e-mail address, lower-cased. */
  email: string;
  /** The identity provider's issuer and subject (`sub`), for the record. */
  issuer: string;
  subject: string;
  displayName: string | null;
  createdAt: Instant;
  /** Last request seen (refreshed at most about once a minute): the idle timeout counts from here. */
  lastSeenAt: Instant;
  /** The absolute end of the session, whatever its activity. */
  expiresAt: Instant;
  revokedAt: Instant | null;
  clientAddress: string | null;
  userAgent: string | null;
}

export type AuditAction =
  | 'roster'
  | 'roster-refused'
  /** A session page on /staff (web/staff-session-page.ts): its roster, without or with medical and contact data. */
  | 'session-roster'
  | 'session-medical-contacts'
  /** "My teams" (/staff) opened: it names who is out of the listed sessions, and why. */
  | 'my-teams'
  | 'feed-rotate'
  | 'feeds-accept-store'
  | 'sign-in'
  | 'sign-in-refused'
  | 'sign-out'
  | 'sessions-ended'
  /** A family's "can't make it" through a calendar page (src/families/absences.ts), its undo, and refusals. */
  | 'absence-report'
  | 'absence-undo'
  | 'absence-refused';

/** One line of the audit log: who did what to which school/team/session, from where. */
export interface AuditRecord {
  id: number;
  at: Instant;
  action: AuditAction;
  /** The person's e-mail, `admin token`, or a calendar link by its id (`child link 1a2b…`, `family link …`). */
  actor: string;
  schoolId: SchoolId | null;
  teamId: Id | null;
  /** The upstream session (training, fixture) a sheet was printed for. */
  sessionId: Id | null;
  template: string | null;
  clientAddress: string | null;
  /** First characters of the staff session's id hash: ties records to one sign-in without revealing it. */
  staffSession: string | null;
  /** A short free text (why a sign-in was refused, the feed scope rotated…). */
  detail: string | null;
}

export interface AuditQuery {
  since?: Instant;
  until?: Instant;
  /** Exact actor (e-mail compared case-insensitively, or `admin token`). */
  actor?: string;
  schoolId?: SchoolId;
  teamId?: Id;
  template?: string;
  action?: AuditAction;
  /** Newest first; default 200. */
  limit?: number;
  /** Records with an id below this one (paging newest-first). */
  beforeId?: number;
}

/**
 * The snapshot: schools, the records a pull writes and everything else reads (projection, feeds, rosters, push),
 * the data version feeds cache by, the pull's cursors, and the records a full listing left out.
 */
export interface RecordsRepository {
  // --- schools
  /** Sends nothing when this store last wrote the school as it is (nothing deletes a school's row). */
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
  /** upsert of records already made ready (see prepareRecord in kinds.ts): the pull prepares while it downloads. */
  upsertPrepared(
    schoolId: SchoolId,
    kind: ResourceKind,
    records: readonly PreparedRecord[],
    at: Instant,
  ): Promise<UpsertStats>;
  /**
   * Rewrites the stored content of every record of a kind, deleted ones included, through fn (to strip data the
   * school no longer keeps), but those in `except` (just written through fn: not even read). Versions and
   * deletion marks stay. Returns how many records changed.
   */
  rewriteRecords<K extends ResourceKind>(
    schoolId: SchoolId,
    kind: K,
    fn: (record: ResourceMap[K]) => ResourceMap[K],
    except?: ReadonlySet<Id | string>,
  ): Promise<number>;
  /** Content hash of every live record of a kind, by id: lets the pull drop unchanged records as they arrive. */
  liveHashes(schoolId: SchoolId, kind: ResourceKind): Promise<Map<Id | string, string>>;
  /** Live (not deleted) ids of a kind; for sessions and absences optionally only those intersecting a window. */
  liveIds(schoolId: SchoolId, kind: ResourceKind, window?: { from: Instant; to: Instant }): Promise<Id[]>;
  markDeleted(schoolId: SchoolId, kind: ResourceKind, ids: Id[], at: Instant): Promise<number>;
  /** Monotonic per school; changes whenever any snapshot record changes. Feeds cache per data version. */
  dataVersion(schoolId: SchoolId): Promise<number>;
  /**
   * Monotonic per school; moves with the data version when a write changed a table whom its calendars are of is
   * read from (teams, students, staff, activities: listCalendarSubjects), and only then. Sessions do not move it.
   */
  subjectsVersion(schoolId: SchoolId): Promise<number>;

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
  /** Every live subject of the school's calendars, names and known ids only (calendar-subjects.ts). */
  listCalendarSubjects(schoolId: SchoolId): Promise<CalendarSubject[]>;
  listAbsences(schoolId: SchoolId, query: AbsenceQuery): Promise<Stored<'absences'>[]>;

  /** Sync cursors, e.g. the `updatedAfter` high-water mark per resource. */
  getCursor(schoolId: SchoolId, key: string): Promise<string | null>;
  /** Every cursor of the school by key, in one read (a pull's plan). */
  cursors(schoolId: SchoolId): Promise<Map<string, string>>;
  setCursor(schoolId: SchoolId, key: string, value: string): Promise<void>;
  /**
   * Sets several cursors of the school in one statement. `atCommit`: inside a transaction, as it commits (read
   * back within it, not there yet), with its other last writes on PostgreSQL. `fence`: see lease-fence.ts.
   */
  setCursors(
    schoolId: SchoolId,
    values: ReadonlyMap<string, string>,
    opts?: { atCommit?: boolean; fence?: number },
  ): Promise<void>;
  /** Ids of a kind that the last complete full listing left out (still live), with since when. */
  listMissing(schoolId: SchoolId, kind: ResourceKind): Promise<Map<Id, Instant>>;
  /** listMissing of several kinds in one read: every kind asked for is in the map, empty when none are held. */
  listMissingOf(
    schoolId: SchoolId,
    kinds: readonly ResourceKind[],
  ): Promise<Map<ResourceKind, Map<Id, Instant>>>;
  /**
   * What a pull reads of the school before its resources' turns, in one statement (two were a round trip each on
   * PostgreSQL at every fire): every cursor (as `cursors`) and the missing ids of each kind (as `listMissingOf`).
   */
  pullState(
    schoolId: SchoolId,
    kinds: readonly ResourceKind[],
  ): Promise<{ cursors: Map<string, string>; missing: Map<ResourceKind, Map<Id, Instant>> }>;
  /** Replaces the kind's missing ids with these (existing ones keep their `since`). */
  setMissing(schoolId: SchoolId, kind: ResourceKind, ids: readonly Id[], at: Instant): Promise<void>;
}

/** What a pull reads of a school's runs before it starts its own (RunsRepository.pullOpening). */
export interface PullOpening {
  /** Its last 20 runs of any kind, newest first (runs whose process died are closed from these). */
  recent: SyncRun[];
  /** The pending full-pull request, or null (as fullPullRequest). */
  fullRequest: { at: Instant; by: string } | null;
  /** Whether one of its last 50 full pulls completed (succeeded or suspicious). */
  completedFull: boolean;
}

/** A school's last pull and whether it ever completed a full one (RunsRepository.lastPulls). */
export interface LastPull {
  last: SyncRun | null;
  completedFull: boolean;
}

/** Runs and who runs them: sync runs, job status, full-pull requests, owners' heartbeats, pull and push leases. */
export interface RunsRepository {
  // --- sync runs and job status
  startRun(run: {
    schoolId: SchoolId;
    kind: RunKind;
    target?: string | null;
    at: Instant;
    /** The process running it (see beat): once it stops beating, the run reads as interrupted. */
    owner?: string | null;
  }): Promise<number>;
  finishRun(
    id: number,
    result: Omit<SyncRun, 'id' | 'schoolId' | 'kind' | 'target' | 'startedAt'> & { finishedAt: Instant },
  ): Promise<void>;
  /**
   * What a run still going has done so far (counts of what it committed, upstream calls), kept after each step
   * so a run whose process dies reads true; a run already finished is left as it is. `atCommit`: inside a
   * transaction, as it commits, with what it committed (see RecordsRepository.setCursors).
   */
  recordRunProgress(id: number, progress: RunProgress, opts?: { atCommit?: boolean }): Promise<void>;
  listRuns(schoolId: SchoolId, opts?: { kind?: RunKind; limit?: number }): Promise<SyncRun[]>;
  /**
   * Of each school given that the store holds, in one query: its last pull (push runs left out), and whether it
   * ever completed a full pull (succeeded or suspicious). Serve's start reads every school's from it.
   */
  lastPulls(schoolIds: readonly SchoolId[]): Promise<Map<SchoolId, LastPull>>;
  /** Everything a pull reads of the school's runs before its own, in one query (was three round trips). */
  pullOpening(schoolId: SchoolId): Promise<PullOpening>;
  /** Writes the fields given and leaves the others (a replica's save never undoes another's). */
  saveJobStatus(status: JobStatusPatch): Promise<void>;
  listJobStatus(schoolId?: SchoolId): Promise<JobStatus[]>;
  /**
   * Asks for a full pull of the school (a full fire that found another pull running): kept until a full pull
   * that starts at or after `at` finishes. A later request moves `at` forward.
   */
  requestFullPull(schoolId: SchoolId, at: Instant, by: string): Promise<void>;
  /** The pending full-pull request, or null. */
  fullPullRequest(schoolId: SchoolId): Promise<{ at: Instant; by: string } | null>;
  /** A full pull that started at `startedAt` has run: requests made up to then are satisfied. */
  satisfyFullPull(schoolId: SchoolId, startedAt: Instant): Promise<void>;
  // --- run owners, pull and push leases (every process and replica sharing the database)
  /** Records that the owner is alive now. Runs of an owner silent for OWNER_SILENT_MS read as interrupted. */
  beat(owner: RunOwner, at: Instant): Promise<void>;
  /** The owner stopped cleanly: its runs still marked running read as interrupted at once. */
  forgetOwner(ownerId: string): Promise<void>;
  /** Takes the school's pull lease unless an owner alive at `at` (the caller's clock) holds it. */
  acquirePullLease(schoolId: SchoolId, ownerId: string, at: Instant): Promise<PullLease>;
  /** Frees the lease taken with this token (a no-op when it was taken over since). */
  releasePullLease(schoolId: SchoolId, token: string): Promise<void>;
  /** As the two above, for a push target's lease (`school/target`). */
  acquirePushLease(target: string, ownerId: string, at: Instant): Promise<PullLease>;
  releasePushLease(target: string, token: string): Promise<void>;
  /** Takes the target's lease, held or not, raising its fence: for the holder of its turn in the job queue. */
  seizePushLease(target: string, ownerId: string, at: Instant): Promise<{ token: string; fence: number }>;
  /** As seizePushLease, for the school's pull turn `turn` (its token): its fence. */
  seizePullLease(schoolId: SchoolId, ownerId: string, at: Instant, turn: string): Promise<number>;
  /** Who holds the school's lease (null: no one), and whether that owner is gone at `at` (the caller's clock). */
  pullLeaseHolder(schoolId: SchoolId, at: Instant): Promise<PullLeaseHolder | null>;
}

/** Feeds as last published: each event's version per feed, the rendered bytes, and the installation's UID domain. */
export interface RenderedFeedsRepository {
  /**
   * This installation's part of event UIDs (calendar/uid.ts), made when the store was created; null for a store
   * that published UIDs before installations had one (they keep `@<school>.rostercal`), or one not yet migrated.
   */
  uidDomain(): Promise<string | null>;

  // --- what each feed last published per session (SEQUENCE/LAST-MODIFIED move only when its audience's view does)
  getFeedEventVersions(
    schoolId: SchoolId,
    scope: StoredFeedScope,
    scopeId: Id,
  ): Promise<Map<Id, PublishedEvent>>;
  /** Replaces the feed's versions with these (sessions no longer in the feed are forgotten). */
  saveFeedEventVersions(
    schoolId: SchoolId,
    scope: StoredFeedScope,
    scopeId: Id,
    versions: ReadonlyMap<Id, PublishedEvent>,
  ): Promise<void>;

  // --- rendered feeds (compressed bytes kept in the store, so serve's memory does not grow with the feeds)
  getRenderedFeed(
    schoolId: SchoolId,
    scope: StoredFeedScope,
    scopeId: Id,
  ): Promise<RenderedFeedRecord | null>;
  listRenderedFeedStates(schoolId: SchoolId): Promise<RenderedFeedState[]>;
  saveRenderedFeed(record: RenderedFeedRecord): Promise<void>;
  saveRenderedFeedBrotli(
    schoolId: SchoolId,
    scope: StoredFeedScope,
    scopeId: Id,
    etag: string,
    br: Buffer,
  ): Promise<void>;
  /** Confirms these feeds (when still made from `inputs`) as right for `dataVersion`, in one transaction. */
  markRenderedFeedsCurrent(
    schoolId: SchoolId,
    feeds: readonly { scope: FeedScope; scopeId: Id; inputs: string }[],
    dataVersion: number,
  ): Promise<void>;
  deleteRenderedFeeds(
    schoolId: SchoolId,
    feeds: readonly { scope: StoredFeedScope; scopeId: Id }[],
  ): Promise<void>;
  /** What the school's last complete re-render pass was made for (its caller's words); null before any. */
  renderPassMark(schoolId: SchoolId): Promise<string | null>;
  saveRenderPassMark(schoolId: SchoolId, mark: string): Promise<void>;
}

/** The capabilities that open feeds: feed tokens, the feed rotation record, family links. */
export interface FeedLinksRepository {
  // --- feed tokens
  saveFeedToken(token: FeedToken): Promise<void>;
  /** The live (not revoked) token of a scope, if one was issued. */
  getFeedToken(schoolId: SchoolId, scope: FeedScope, scopeId: Id): Promise<FeedToken | null>;
  findFeedTokenByHash(tokenHash: string): Promise<FeedToken | null>;
  revokeFeedToken(schoolId: SchoolId, scope: FeedScope, scopeId: Id, at: Instant): Promise<void>;
  listFeedTokens(schoolId?: SchoolId): Promise<FeedToken[]>;
  /** A short text that changes whenever a token of the school is issued or revoked (one aggregate read). */
  feedTokensMark(schoolId: SchoolId): Promise<string>;

  // --- the feed rotation record (feeds/rotations.ts): the secret it vouches for, and every rotation
  getFeedRotationRecord(): Promise<{ secret: string; createdAt: Instant } | null>;
  /** Starts the record for this secret fingerprint (a record of another secret is replaced, rotations and all). */
  startFeedRotationRecord(secret: string, at: Instant): Promise<void>;
  addFeedRotations(rows: readonly FeedRotationRow[]): Promise<void>;
  listFeedRotations(): Promise<FeedRotationRow[]>;
  /** A number that changes whenever a rotation is recorded: one cheap read, polled by feed servers. */
  feedRotationsMark(): Promise<number>;

  // --- family links (one capability for several feeds)
  saveFamilyLink(link: FamilyLink): Promise<void>;
  findFamilyLinkByHash(tokenHash: string): Promise<FamilyLink | null>;
}

/** What push believes exists in remote calendars: the calendars a target owns and the events in them. */
export interface PushRepository {
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
  /** The same, whose writes commit only while the target's lease is held at `fence` (lease-fence.ts). */
  fencedBy(fence: PushFence): PushRepository;
}

/** Who is signed in as staff, and the audit log. */
export interface StaffAccessRepository {
  // --- staff sessions and the audit log
  createStaffSession(session: StaffSession): Promise<void>;
  getStaffSession(idHash: string): Promise<StaffSession | null>;
  /** Refreshes lastSeenAt (idle timeout). */
  touchStaffSession(idHash: string, at: Instant): Promise<void>;
  /** Ends one session; true when it was live. */
  revokeStaffSession(idHash: string, at: Instant): Promise<boolean>;
  /** Ends every live session of a person (e-mail, case-insensitive); returns how many. */
  revokeStaffSessionsOf(email: string, at: Instant): Promise<number>;
  /** Sessions neither revoked nor past their absolute expiry at `at` (idle ones included), newest first. */
  listStaffSessions(at: Instant): Promise<StaffSession[]>;
  /** Deletes sessions that ended (revoked or expired) before `before`. */
  pruneStaffSessions(before: Instant): Promise<number>;
  appendAudit(record: Omit<AuditRecord, 'id'>): Promise<number>;
  listAudit(query?: AuditQuery): Promise<AuditRecord[]>;
  /** Deletes audit records older than `before`; returns how many. */
  pruneAudit(before: Instant): Promise<number>;
}

/** Where a family's report of a child's absence from a session stands (families/absences.ts, issue 40). */
export type AbsenceActState =
  /** Reserved; the upstream write is under way (or its replica stopped before it ended). */
  | 'pending'
  /** Written, but its answer was lost (a 5xx, a cut, a timeout): the settle step reads it back. */
  | 'unknown'
  | 'reported'
  /** Its undo is under way, or its answer was lost. */
  | 'undoing'
  /**
   * Not found upstream by its mark after the upstream's time to apply it: as if never made (it stands for nothing
   * and counts against no limit; the store's reads of acts leave it out), but looked for again for a day after
   * its report, and reported, counting, if a late write turns up (absence-settle.ts).
   */
  | 'not-made';

export interface AbsenceAct {
  schoolId: SchoolId;
  studentId: Id;
  sessionId: Id;
  linkId: string;
  state: AbsenceActState;
  absenceId: Id | null;
  /** The session's times when it was reserved: what the absence covers upstream. */
  start: Instant;
  end: Instant;
  reservedAt: Instant;
  updatedAt: Instant;
}

export type AbsenceActKey = Pick<AbsenceAct, 'schoolId' | 'studentId' | 'sessionId'>;

export type Reservation =
  | { taken: true }
  /** One stands for this child and session already: the answer comes from it. */
  | { taken: false; existing: AbsenceAct }
  /** The child has `standing` reports reserved since the limit's start: as many as it allows. */
  | { taken: false; standing: number };

/**
 * Families' acts as every replica decides them: a report of a child's absence is reserved here, atomically, before
 * the upstream write (one per school, child and session; at most `max` standing for a child), and each act of a
 * client address is counted here for its limit.
 */
export interface FamilyActsRepository {
  /**
   * Takes the reservation of `act`'s (school, child, session) unless one stands, or the child has `max` standing
   * reservations made at or after `since`. `then` runs inside the same transaction once it is taken (an audit
   * record): when it fails, nothing is reserved.
   */
  reserveAbsence(
    act: AbsenceAct,
    limit: { max: number; since: Instant },
    then?: () => Promise<unknown>,
  ): Promise<Reservation>;
  getAbsenceAct(key: AbsenceActKey): Promise<AbsenceAct | null>;
  /** The acts of these children (of one school), any state. */
  listAbsenceActs(schoolId: SchoolId, studentIds: readonly Id[]): Promise<AbsenceAct[]>;
  /** Acts in these states last changed before `before` (every school): what the settle step looks at. */
  listUnsettledAbsenceActs(states: readonly AbsenceActState[], before: Instant): Promise<AbsenceAct[]>;
  /** Moves an act on, only from one of the states `from` (false: it was not in one); upserts when `from` has null. */
  moveAbsenceAct(
    act: AbsenceAct,
    from: readonly (AbsenceActState | null)[],
    then?: () => Promise<unknown>,
  ): Promise<boolean>;
  /** Ends an act (withdrawn, or never made), only from one of the states `from`. */
  releaseAbsenceAct(key: AbsenceActKey, from: readonly AbsenceActState[]): Promise<boolean>;
  /**
   * Forgets what no decision reads any more: address acts before `before`, and reported acts whose session ended
   * before it (the upstream keeps the absence; the limit counts only the last 24 hours). Returns how many.
   */
  pruneFamilyActs(before: Instant): Promise<number>;
  /**
   * Counts an act of a client address unless it made `max` since `since` (then: when the oldest of those was).
   * Older acts of that address are forgotten.
   */
  takeAddressAct(
    schoolId: SchoolId,
    addressKey: string,
    limit: { at: Instant; since: Instant; max: number },
  ): Promise<{ ok: true } | { ok: false; oldest: Instant }>;
}

export type TransactionOptions = { writes?: TransactionWrites; bounded?: boolean }; // Store.transaction's
type TransactionWrites = { schoolId: SchoolId; kinds: readonly ResourceKind[]; fence?: number };
/**
 * The store: one database (one Kysely instance, one transaction context) seen through small repositories. A
 * consumer takes only the repositories it uses (`Pick<Store, 'records' | 'feeds'>`); a transaction opened here
 * spans every repository: calls made inside `transaction(fn)`, through `tx` or not, join it.
 */
export interface Store {
  readonly dialect: 'sqlite' | 'postgres';
  /**
   * Why this store was opened read-only (SQLite: its file or DATA_DIR cannot be written: a read-only mount, a
   * full disk at start), or null. Reads work; every write fails. It stays so until the process starts again.
   */
  readonly readOnly: string | null;
  /** Applies pending migrations (idempotent; safe when several processes start at once); returns their names. */
  migrate(): Promise<string[]>;
  close(): Promise<void>;
  /** Health probe for /readyz. */
  ping(): Promise<void>;
  /**
   * Whether every page of the store can be read: null, or what is damaged. SQLite: quick_check of the whole
   * file, off the event loop (seconds for a large file: call it now and then, not per request). PostgreSQL:
   * null (the server checks its own pages; a damaged one fails the queries that read it).
   */
  checkIntegrity(): Promise<string | null>;
  /**
   * Runs fn atomically: everything it wrote is kept, or nothing is. `writes`: the kinds of a school fn writes
   * records of, whose locks PostgreSQL takes as it begins, and a pull's `fence` on them (lease-fence.ts). `bounded`:
   * a request's, committed within the request deadline or cut (PostgreSQL; pg-deadline.ts, TransactionCutError).
   */
  transaction<T>(fn: (tx: Store) => Promise<T>, opts?: TransactionOptions): Promise<T>;

  /** The scheduled fires as jobs of a queue replicas share (PostgreSQL: `fire-queue.ts`); null on SQLite (one process). */
  readonly fires: FireQueue | null;
  /**
   * Each push target's and each school's turn across processes sharing the store (PostgreSQL: a pg-boss queue per
   * target, per school); null on SQLite, where the lease rows (`acquirePushLease`, `acquirePullLease`) order a
   * `serve` and a `rostercal sync` beside it.
   */
  readonly pushTurns: PushTurns | null;
  readonly pullTurns: PullTurns | null;
  readonly records: RecordsRepository;
  readonly runs: RunsRepository;
  readonly feeds: RenderedFeedsRepository;
  readonly links: FeedLinksRepository;
  readonly push: PushRepository;
  readonly access: StaffAccessRepository;
  readonly families: FamilyActsRepository;
}
