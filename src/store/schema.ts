// Row shapes of the store's tables, as Kysely sees them. Instants are ISO strings (`YYYY-MM-DDTHH:mm:ss.sssZ`)
// in text columns in both dialects, so reads return identical strings and text order is time order.
// Booleans are 0/1 integers in both dialects for the same reason.
import type { Generated } from 'kysely';

/** Columns every snapshot table has. */
export interface SnapshotColumns {
  school_id: string;
  /** Upstream id; custom fields are keyed by their text `key`. */
  id: number | string;
  /** The normalised domain record as stable (sorted-key) JSON. */
  data: string;
  /** Hash of `data`: an unchanged record is never rewritten. */
  hash: string;
  /** ICS SEQUENCE: +1 on each content change. */
  version: number;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

/**
 * The indexed columns some snapshot tables add (sessions: start/end/activity/cancelled; absences: student and
 * window; teams: activity; students: year group; student_teams: student and team). Typed on one shape so the
 * generic snapshot code can address any table; each kind only writes the columns its spec declares.
 */
export interface SnapshotExtras {
  start_at: string | null;
  end_at: string | null;
  activity_id: number | null;
  cancelled: number | null;
  student_id: number | null;
  team_id: number | null;
  year_group_id: number | null;
}

export type SnapshotTable = SnapshotColumns & SnapshotExtras;

export const SNAPSHOT_TABLES = [
  'sessions',
  'teams',
  'students',
  'staff',
  'absences',
  'activities',
  'locations',
  'year_groups',
  'departments',
  'student_teams',
  'custom_fields',
] as const;
export type SnapshotTableName = (typeof SNAPSHOT_TABLES)[number];

/** Membership tables derived from snapshot records on upsert, so membership queries are index lookups. */
export interface JoinTable {
  school_id: string;
  session_id: number;
  team_id: number;
  staff_id: number;
  student_id: number;
}
export const JOIN_TABLES = ['session_teams', 'session_staff', 'session_students', 'team_students'] as const;
export type JoinTableName = (typeof JOIN_TABLES)[number];

export interface SchemaMigrationsTable {
  name: string;
  applied_at: string;
}

export interface SchoolsTable {
  id: string;
  name: string;
  time_zone: string;
  created_at: string;
  updated_at: string;
}

export interface DataVersionsTable {
  school_id: string;
  version: number;
  /** Moves only with a write to a table the calendars' subjects are read from (calendar-subjects.ts). */
  subjects_version: number;
}

export interface SyncRunsTable {
  id: Generated<number>;
  school_id: string;
  kind: string;
  target: string | null;
  status: string;
  started_at: string;
  finished_at: string | null;
  /** JSON: Record<resource, RunCounts>. */
  counts: string;
  upstream_requests: number;
  retries: number;
  throttled: number;
  /** JSON: string[]. */
  errors: string;
  warning: string | null;
  /** The process running it (run_owners.owner); null for runs recorded before owners were. */
  owner: string | null;
  /** Upstream's clock minus this server's during a pull (ms); null when not measured. */
  upstream_skew_ms: number | string | null;
}

export interface RunOwnersTable {
  owner: string;
  host: string;
  pid: number;
  started_at: string;
  heartbeat_at: string;
}

export interface PullLeasesTable {
  school_id: string;
  /** '' while the lease is free: a released lease keeps its row, and so its fence. */
  owner: string;
  /** One per acquisition: a release only ever frees its own lease ('' once freed). */
  token: string;
  acquired_at: string;
  /** Raised by one at each acquisition and takeover: what a pull's writes are checked against (lease-fence.ts). */
  fence: Generated<number>;
}

/** A push target's lease (`school/target`): one push of a target at a time across processes and replicas. */
export interface PushLeasesTable {
  target: string;
  owner: string;
  token: string;
  acquired_at: string;
  fence: Generated<number>;
}

export interface SyncCursorsTable {
  school_id: string;
  key: string;
  value: string;
  updated_at: string;
}

export interface JobStatusTable {
  school_id: string;
  job: string;
  last_started_at: string | null;
  last_finished_at: string | null;
  last_status: string | null;
  last_error: string | null;
  next_run_at: string | null;
  /** The process that started the last run (run_owners.owner): once it stops beating, that run is interrupted. */
  owner: string | null;
  /** The last fire let pass without running, and why (another pull of the school was running…). */
  last_skipped_at: string | null;
  last_skip_reason: string | null;
}

/** A full pull asked for while another pull held the school: the next pull to take the lease runs full. */
export interface PullRequestsTable {
  school_id: string;
  /** Satisfied by a full pull that starts at or after this instant. */
  full_requested_at: string;
  requested_by: string;
}

/** Records a complete full listing left out once: deleted when the next one leaves them out too. */
export interface MissingRecordsTable {
  school_id: string;
  kind: string;
  id: number;
  since: string;
}

export interface FeedTokensTable {
  token_hash: string;
  school_id: string;
  scope: string;
  scope_id: number;
  version: number;
  created_at: string;
  revoked_at: string | null;
}

export interface PushCalendarsTable {
  school_id: string;
  target: string;
  calendar_key: string;
  remote_calendar_id: string;
  paused_until: string | null;
  last_reconciled_at: string | null;
}

export interface PushMappingsTable {
  school_id: string;
  target: string;
  calendar_key: string;
  session_id: number;
  remote_event_id: string;
  content_hash: string;
  updated_at: string;
}

export interface StaffSessionsTable {
  id_hash: string;
  email: string;
  issuer: string;
  subject: string;
  display_name: string | null;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  revoked_at: string | null;
  client_address: string | null;
  user_agent: string | null;
}

export interface AuditLogTable {
  id: Generated<number>;
  at: string;
  action: string;
  actor: string;
  /** lower(actor): filtering by person is an index lookup in both dialects. */
  actor_key: string;
  school_id: string | null;
  team_id: number | null;
  session_id: number | null;
  template: string | null;
  client_address: string | null;
  staff_session: string | null;
  detail: string | null;
}

export type DB = { [T in SnapshotTableName]: SnapshotTable } & { [T in JoinTableName]: JoinTable } & {
  schema_migrations: SchemaMigrationsTable;
  schools: SchoolsTable;
  data_versions: DataVersionsTable;
  sync_runs: SyncRunsTable;
  sync_cursors: SyncCursorsTable;
  job_status: JobStatusTable;
  feed_tokens: FeedTokensTable;
  family_links: FamilyLinksTable;
  feed_rotation_record: FeedRotationRecordTable;
  installation: InstallationTable;
  feed_rotations: FeedRotationsTable;
  feed_event_versions: FeedEventVersionsTable;
  rendered_feeds: RenderedFeedsTable;
  render_passes: RenderPassesTable;
  push_calendars: PushCalendarsTable;
  push_mappings: PushMappingsTable;
  run_owners: RunOwnersTable;
  pull_leases: PullLeasesTable;
  push_leases: PushLeasesTable;
  pull_requests: PullRequestsTable;
  missing_records: MissingRecordsTable;
  staff_sessions: StaffSessionsTable;
  audit_log: AuditLogTable;
  family_absence_acts: FamilyAbsenceActsTable;
  family_address_acts: FamilyAddressActsTable;
};

/** A family's report of a child's absence from a session, reserved before the upstream write (issue 40). */
export interface FamilyAbsenceActsTable {
  school_id: string;
  student_id: number;
  session_id: number;
  /** The reporting link's id (domain/family-absence.ts), as the absence's mark carries it. */
  link_id: string;
  /** pending | unknown | reported | undoing */
  state: string;
  absence_id: number | null;
  start_at: string;
  end_at: string;
  reserved_at: string;
  updated_at: string;
}

/** One act (a report or an undo) from a client address, for the per-address limit every replica shares. */
export interface FamilyAddressActsTable {
  id: Generated<number>;
  school_id: string;
  address_key: string;
  at: string;
}

export interface FeedEventVersionsTable {
  school_id: string;
  scope: string;
  scope_id: number;
  /** JSON object: session id → [content hash, SEQUENCE, LAST-MODIFIED] as last published in this feed. */
  versions: string;
}

export interface RenderedFeedsTable {
  school_id: string;
  scope: string;
  scope_id: number;
  /** The school's data version these bytes were last confirmed right for. */
  data_version: number;
  /** The window's day (UTC date) they were made for. */
  window_key: string;
  /** Hash of everything the bytes were made from. */
  inputs: string;
  etag: string;
  last_modified: string;
  gzip: Uint8Array;
  br: Uint8Array | null;
  event_count: number;
  trimmed: number;
  /** JSON array of the next few CalendarEvents (the landing page's "coming up"). */
  upcoming: string;
  /** JSON of the FeedDef. */
  def: string;
  rendered_at: string;
}

/** Per school, what its last complete feed re-render pass was made for (feeds/school-rerender.ts). */
export interface RenderPassesTable {
  school_id: string;
  mark: string;
  at: string;
}

/** One row (id 1): what belongs to this installation rather than to a school. */
export interface InstallationTable {
  id: number;
  /** Its part of event UIDs (12 hex digits); empty for a store that published UIDs before it had one. */
  uid_domain: string;
  created_at: string;
}

/** One row (id 1): the feed secret the store's rotation record vouches for (a fingerprint). */
export interface FeedRotationRecordTable {
  id: number;
  secret: string;
  created_at: string;
}

export interface FeedRotationsTable {
  seq: Generated<number>;
  school_id: string;
  scope: string;
  scope_id: number;
  /** The feed's current version after the rotation. */
  version: number;
  rotated_at: string;
}

export interface FamilyLinksTable {
  token_hash: string;
  school_id: string;
  /** JSON array of FamilyMember. */
  members: string;
  created_at: string;
  revoked_at: string | null;
}
