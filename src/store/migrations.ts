// The one migration set for both dialects. Each migration runs once, in order, inside the same transaction that
// records it in schema_migrations; on PostgreSQL an advisory lock makes concurrent starts wait for each other,
// on SQLite BEGIN IMMEDIATE does the same across processes sharing the file.
import { type Kysely, sql } from 'kysely';
import { stableStringify } from '../util/stable-json.ts';
import { contentHash } from './kinds.ts';
import {
  createLeaseTable,
  type Dialect,
  type Migration,
  type MigrationDb,
  serialKey,
} from './migration-kit.ts';
import { SINCE_0021 } from './migrations-since-0021.ts';
import type { DB } from './schema.ts';

export type { Dialect } from './migration-kit.ts';

/** The membership tables as 0001 made them: [table, owner column, member column]. */
const MEMBERSHIP_TABLES: readonly [table: string, owner: string, member: string][] = [
  ['session_teams', 'session_id', 'team_id'],
  ['session_staff', 'session_id', 'staff_id'],
  ['session_students', 'session_id', 'student_id'],
  ['team_students', 'team_id', 'student_id'],
];

/** A membership table keyed member first, named `name` (its primary key keeps the table's own name). */
function membershipTable(
  db: MigrationDb,
  name: string,
  [table, owner, member]: (typeof MEMBERSHIP_TABLES)[number],
) {
  return db.schema
    .createTable(name)
    .addColumn('school_id', 'text', (c) => c.notNull())
    .addColumn(owner, 'bigint', (c) => c.notNull())
    .addColumn(member, 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint(`${table}_pk`, ['school_id', member, owner]);
}

/** Arbitrary constant: the advisory lock key rostercal's migrations take on PostgreSQL. */
const MIGRATION_LOCK_KEY = 7_245_118_303;

const snapshotCommon = [
  ['data', 'text'],
  ['hash', 'text'],
  ['version', 'integer'],
  ['created_at', 'text'],
  ['updated_at', 'text'],
] as const;

function createIndex(db: MigrationDb, name: string, table: string, columns: string[]) {
  return db.schema.createIndex(name).on(table).columns(columns).execute();
}

async function createSchoolTables(db: MigrationDb) {
  await db.schema
    .createTable('schools')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('time_zone', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('data_versions')
    .addColumn('school_id', 'text', (c) => c.primaryKey())
    .addColumn('version', 'bigint', (c) => c.notNull())
    .execute();
}

/** Snapshot tables: the record as JSON plus the columns queries filter on. */
async function createSnapshotTables(db: MigrationDb) {
  const snapshot: [string, [string, 'bigint' | 'text' | 'integer'][]][] = [
    [
      'sessions',
      [
        ['start_at', 'text'],
        ['end_at', 'text'],
        ['activity_id', 'bigint'],
        ['cancelled', 'integer'],
      ],
    ],
    ['teams', [['activity_id', 'bigint']]],
    ['students', [['year_group_id', 'bigint']]],
    ['staff', []],
    [
      'absences',
      [
        ['student_id', 'bigint'],
        ['start_at', 'text'],
        ['end_at', 'text'],
      ],
    ],
    ['activities', []],
    ['locations', []],
    ['year_groups', []],
    ['departments', []],
    [
      'student_teams',
      [
        ['student_id', 'bigint'],
        ['team_id', 'bigint'],
        ['start_at', 'text'],
        ['end_at', 'text'],
      ],
    ],
    ['custom_fields', []],
  ];
  for (const [table, extras] of snapshot) {
    let t = db.schema
      .createTable(table)
      .addColumn('school_id', 'text', (c) => c.notNull())
      .addColumn('id', table === 'custom_fields' ? 'text' : 'bigint', (c) => c.notNull());
    for (const [name, type] of snapshotCommon) t = t.addColumn(name, type, (c) => c.notNull());
    t = t.addColumn('deleted_at', 'text');
    for (const [name, type] of extras) t = t.addColumn(name, type);
    await t.addPrimaryKeyConstraint(`${table}_pk`, ['school_id', 'id']).execute();
  }
  await createIndex(db, 'sessions_start', 'sessions', ['school_id', 'start_at']);
  await createIndex(db, 'sessions_activity', 'sessions', ['school_id', 'activity_id', 'start_at']);
  await createIndex(db, 'absences_student', 'absences', ['school_id', 'student_id', 'start_at']);
  await createIndex(db, 'absences_start', 'absences', ['school_id', 'start_at']);
  await createIndex(db, 'teams_activity', 'teams', ['school_id', 'activity_id']);
  await createIndex(db, 'students_year_group', 'students', ['school_id', 'year_group_id']);
  await createIndex(db, 'student_teams_student', 'student_teams', ['school_id', 'student_id']);
  await createIndex(db, 'student_teams_team', 'student_teams', ['school_id', 'team_id']);
}

/**
 * Membership tables: keyed member-first (the lookups go "sessions of this team/staff/student"),
 * with an owner index for rewriting one owner's rows.
 */
async function createMembershipTables(db: MigrationDb) {
  for (const join of MEMBERSHIP_TABLES) {
    const [table, owner] = join;
    await membershipTable(db, table, join).execute();
    await createIndex(db, `${table}_owner`, table, ['school_id', owner]);
  }
}

async function createRunTables(db: MigrationDb, dialect: Dialect) {
  await db.schema
    .createTable('sync_runs')
    .addColumn('id', ...serialKey(dialect))
    .addColumn('school_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('target', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text')
    .addColumn('counts', 'text', (c) => c.notNull())
    .addColumn('upstream_requests', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('retries', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('throttled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('errors', 'text', (c) => c.notNull())
    .addColumn('warning', 'text')
    .execute();
  await createIndex(db, 'sync_runs_school', 'sync_runs', ['school_id', 'kind', 'id']);

  await db.schema
    .createTable('sync_cursors')
    .addColumn('school_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('sync_cursors_pk', ['school_id', 'key'])
    .execute();

  await db.schema
    .createTable('job_status')
    .addColumn('school_id', 'text', (c) => c.notNull())
    .addColumn('job', 'text', (c) => c.notNull())
    .addColumn('last_started_at', 'text')
    .addColumn('last_finished_at', 'text')
    .addColumn('last_status', 'text')
    .addColumn('last_error', 'text')
    .addColumn('next_run_at', 'text')
    .addPrimaryKeyConstraint('job_status_pk', ['school_id', 'job'])
    .execute();
}

async function createFeedTokenTable(db: MigrationDb) {
  await db.schema
    .createTable('feed_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('school_id', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('scope_id', 'bigint', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .execute();
  await createIndex(db, 'feed_tokens_scope', 'feed_tokens', ['school_id', 'scope', 'scope_id']);
}

async function createPushTables(db: MigrationDb) {
  await db.schema
    .createTable('push_calendars')
    .addColumn('school_id', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('calendar_key', 'text', (c) => c.notNull())
    .addColumn('remote_calendar_id', 'text', (c) => c.notNull())
    .addColumn('paused_until', 'text')
    .addColumn('last_reconciled_at', 'text')
    .addPrimaryKeyConstraint('push_calendars_pk', ['school_id', 'target', 'calendar_key'])
    .execute();

  await db.schema
    .createTable('push_mappings')
    .addColumn('school_id', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('calendar_key', 'text', (c) => c.notNull())
    .addColumn('session_id', 'bigint', (c) => c.notNull())
    .addColumn('remote_event_id', 'text', (c) => c.notNull())
    .addColumn('content_hash', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('push_mappings_pk', ['school_id', 'target', 'calendar_key', 'session_id'])
    .execute();
}

async function createFireClaimsTable(db: MigrationDb) {
  await db.schema
    .createTable('fire_claims')
    .addColumn('job', 'text', (c) => c.notNull())
    .addColumn('fire_time', 'text', (c) => c.notNull())
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('claimed_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('fire_claims_pk', ['job', 'fire_time'])
    .execute();
}

/** 0001's steps, in the order it has always created its tables and indexes. */
const initialSteps: readonly ((db: MigrationDb, dialect: Dialect) => Promise<void>)[] = [
  createSchoolTables,
  createSnapshotTables,
  createMembershipTables,
  createRunTables,
  createFeedTokenTable,
  createPushTables,
  createFireClaimsTable,
];

const initial: Migration = {
  name: '0001_initial',
  async up(db, dialect) {
    for (const step of initialSteps) await step(db, dialect);
  },
};

const staffSessionsAndAudit: Migration = {
  name: '0010_i10_staff_sessions_and_audit',
  async up(db, dialect) {
    await db.schema
      .createTable('staff_sessions')
      .addColumn('id_hash', 'text', (c) => c.primaryKey())
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('issuer', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('display_name', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('last_seen_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('revoked_at', 'text')
      .addColumn('client_address', 'text')
      .addColumn('user_agent', 'text')
      .execute();
    await db.schema.createIndex('staff_sessions_email').on('staff_sessions').columns(['email']).execute();
    await db.schema
      .createIndex('staff_sessions_expires')
      .on('staff_sessions')
      .columns(['expires_at'])
      .execute();

    await db.schema
      .createTable('audit_log')
      .addColumn('id', dialect === 'sqlite' ? 'integer' : 'bigint', (c) =>
        dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey().generatedByDefaultAsIdentity(),
      )
      .addColumn('at', 'text', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('actor', 'text', (c) => c.notNull())
      .addColumn('actor_key', 'text', (c) => c.notNull())
      .addColumn('school_id', 'text')
      .addColumn('team_id', 'bigint')
      .addColumn('session_id', 'bigint')
      .addColumn('template', 'text')
      .addColumn('client_address', 'text')
      .addColumn('staff_session', 'text')
      .addColumn('detail', 'text')
      .execute();
    await db.schema.createIndex('audit_log_at').on('audit_log').columns(['at']).execute();
    await db.schema.createIndex('audit_log_actor').on('audit_log').columns(['actor_key', 'id']).execute();
    await db.schema.createIndex('audit_log_team').on('audit_log').columns(['team_id', 'id']).execute();
  },
};

const familyLinks: Migration = {
  name: '0013_i13b_family_links',
  async up(db) {
    await db.schema
      .createTable('family_links')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('school_id', 'text', (c) => c.notNull())
      .addColumn('members', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('revoked_at', 'text')
      .execute();
  },
};

const feedEventVersions: Migration = {
  name: '0014_i13a_feed_event_versions',
  async up(db) {
    await db.schema
      .createTable('feed_event_versions')
      .addColumn('school_id', 'text', (c) => c.notNull())
      .addColumn('scope', 'text', (c) => c.notNull())
      .addColumn('scope_id', 'bigint', (c) => c.notNull())
      .addColumn('versions', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('feed_event_versions_pk', ['school_id', 'scope', 'scope_id'])
      .execute();
  },
};

/**
 * Who runs what: every process that runs pulls or pushes beats in `run_owners`; a run names its owner, so a run
 * whose owner stopped beating is known to be interrupted. `pull_leases` holds at most one pull per school across
 * every process and replica sharing the database.
 */
const runOwnersAndPullLeases: Migration = {
  name: '0012_i12_run_owners_and_pull_leases',
  async up(db) {
    await db.schema.alterTable('sync_runs').addColumn('owner', 'text').execute();
    await db.schema
      .createTable('run_owners')
      .addColumn('owner', 'text', (c) => c.primaryKey())
      .addColumn('host', 'text', (c) => c.notNull())
      .addColumn('pid', 'integer', (c) => c.notNull())
      .addColumn('started_at', 'text', (c) => c.notNull())
      .addColumn('heartbeat_at', 'text', (c) => c.notNull())
      .execute();
    await createLeaseTable(db, 'pull_leases', 'school_id');
  },
};

/**
 * Rendered feeds in the store (compressed), so a server's memory does not grow with the number of feeds and a
 * feed's Last-Modified survives a restart while its ETag holds.
 */
const renderedFeeds: Migration = {
  name: '0015_i16_rendered_feeds',
  async up(db, dialect) {
    const bytes = dialect === 'postgres' ? 'bytea' : 'blob';
    await db.schema
      .createTable('rendered_feeds')
      .addColumn('school_id', 'text', (c) => c.notNull())
      .addColumn('scope', 'text', (c) => c.notNull())
      .addColumn('scope_id', 'bigint', (c) => c.notNull())
      .addColumn('data_version', 'bigint', (c) => c.notNull())
      .addColumn('window_key', 'text', (c) => c.notNull())
      .addColumn('inputs', 'text', (c) => c.notNull())
      .addColumn('etag', 'text', (c) => c.notNull())
      .addColumn('last_modified', 'text', (c) => c.notNull())
      .addColumn('gzip', bytes, (c) => c.notNull())
      .addColumn('br', bytes)
      .addColumn('event_count', 'integer', (c) => c.notNull())
      .addColumn('trimmed', 'integer', (c) => c.notNull())
      .addColumn('upcoming', 'text', (c) => c.notNull())
      .addColumn('def', 'text', (c) => c.notNull())
      .addColumn('rendered_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('rendered_feeds_pk', ['school_id', 'scope', 'scope_id'])
      .execute();
  },
};

/**
 * Window reads (`start_at < to and (end_at > from or start_at >= from)`) filtered on the index alone: with only
 * (school_id, start_at), every earlier session's row was read (its JSON first) to test end_at and deleted_at. A
 * district's window in 64 sub-windows, as the feed re-render reads it: 2.3 s → 0.44 s, the worst read
 * 61 → 13 ms. The new index starts with the old one's columns, so the old one goes: one index less per write.
 */
const sessionsWindowIndex: Migration = {
  name: '0016_i16_sessions_window_index',
  async up(db) {
    await db.schema
      .createIndex('sessions_window')
      .on('sessions')
      .columns(['school_id', 'start_at', 'end_at', 'deleted_at'])
      .execute();
    await db.schema.dropIndex('sessions_start').execute();
  },
};

/**
 * PostgreSQL only. Record JSON over ~2 KB is compressed as it is written: lz4 instead of the default pglz, as it
 * compresses faster, which a school's sessions (~3 KB each when this migration was written) showed on insert.
 * Since 0018 a session is ~1 KB and stays uncompressed; a team with its members is still
 * compressed. A server built without lz4 keeps pglz. Rendered feeds are gzip and brotli already: stored as they
 * are, without a compression attempt that cannot gain.
 */
const pgToastSettings: Migration = {
  name: '0017_i16_pg_toast_settings',
  async up(db, dialect) {
    if (dialect !== 'postgres') return;
    // The tables as they were at this migration, not schema.ts's SNAPSHOT_TABLES: a table added later would not
    // exist yet when a new store runs this one.
    const snapshotTables = [
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
    ];
    const lz4 = snapshotTables
      .map((t) => `alter table ${t} alter column data set compression lz4;`)
      .join(' ');
    // feature_not_supported: "compression method lz4 not supported" (a server built without it).
    await sql.raw(`do $$ begin ${lz4} exception when feature_not_supported then null; end $$`).execute(db);
    await sql`alter table rendered_feeds alter column gzip set storage external`.execute(db);
    await sql`alter table rendered_feeds alter column br set storage external`.execute(db);
  },
};

/**
 * Sessions keep only the ids of the students they list (domain/types.ts SessionStudent): names, SIS ids and year
 * groups were over half of every stored session and no output printed them. The stored records are rewritten to
 * what the new pull writes, hashes included, so the first pull after the upgrade finds every session unchanged:
 * no version moves, no calendar sees an update.
 */
const sessionStudentsIdsOnly: Migration = {
  name: '0018_i16_session_students_ids_only',
  async up(db) {
    let after: { school: string; id: number } | null = null;
    for (;;) {
      let page = db
        .selectFrom('sessions')
        .select(['school_id', 'id', 'data'])
        .orderBy('school_id')
        .orderBy('id')
        .limit(500);
      if (after) {
        const { school, id } = after;
        page = page.where((eb) =>
          eb.or([eb('school_id', '>', school), eb.and([eb('school_id', '=', school), eb('id', '>', id)])]),
        );
      }
      const rows = (await page.execute()) as { school_id: string; id: number | string; data: string }[];
      if (rows.length === 0) return;
      for (const row of rows) {
        const record = JSON.parse(row.data) as { students?: { id: number }[] };
        if (!record.students?.some((s) => Object.keys(s).length > 1)) continue;
        record.students = record.students.map((s) => ({ id: s.id }));
        const data = stableStringify(record);
        await db
          .updateTable('sessions')
          .set({ data, hash: contentHash(data) })
          .where('school_id', '=', row.school_id)
          .where('id', '=', row.id)
          .execute();
      }
      const last = rows.at(-1)!;
      after = { school: last.school_id, id: Number(last.id) };
    }
  },
};

/**
 * The membership tables lose their owner index (school_id, session_id / team_id). Every read goes member
 * first, by the primary key; the index served only to find a rewritten record's rows, which are now found
 * from the stored record itself (MembershipRows.stored in memberships.ts) and deleted by primary key. Its
 * inserts, in random order for rows written in member order, were most of the cost of writing memberships: a
 * district's full sync into SQLite spent 2.5–3.1 s on session_students with it and 0.9–1.2 s without.
 */
const membershipsWithoutOwnerIndex: Migration = {
  name: '0019_i16_memberships_without_owner_index',
  async up(db) {
    for (const [table] of MEMBERSHIP_TABLES) await db.schema.dropIndex(`${table}_owner`).ifExists().execute();
  },
};

/**
 * SQLite: the membership tables become WITHOUT ROWID, stored once, in primary-key order, instead of as a rowid
 * table beside its primary-key index: one B-tree to write instead of two. Inserting a district's 535,000
 * session_students rows, in the order a pull writes them: 940–972 → 605–724 ms. (PostgreSQL has no such
 * choice: its tables are heaps.) Rebuilt by copy, the one way SQLite changes a table's storage.
 */
const membershipsWithoutRowid: Migration = {
  name: '0020_i16_sqlite_memberships_without_rowid',
  async up(db, dialect) {
    if (dialect !== 'sqlite') return;
    for (const join of MEMBERSHIP_TABLES) {
      const [table, owner, member] = join;
      const rebuilt = `${table}_rebuilt`;
      await membershipTable(db, rebuilt, join).modifyEnd(sql`without rowid`).execute();
      await sql`insert into ${sql.table(rebuilt)} (school_id, ${sql.ref(owner)}, ${sql.ref(member)})
        select school_id, ${sql.ref(owner)}, ${sql.ref(member)} from ${sql.table(table)}`.execute(db);
      await db.schema.dropTable(table).execute();
      await db.schema.alterTable(rebuilt).renameTo(table).execute();
    }
  },
};

export const MIGRATIONS: readonly Migration[] = [
  initial,
  staffSessionsAndAudit,
  familyLinks,
  feedEventVersions,
  runOwnersAndPullLeases,
  renderedFeeds,
  sessionsWindowIndex,
  pgToastSettings,
  sessionStudentsIdsOnly,
  membershipsWithoutOwnerIndex,
  membershipsWithoutRowid,
  ...SINCE_0021,
];

/** Applies pending migrations; returns the names applied (empty when the schema was current). */
export async function runMigrations(db: Kysely<DB>, dialect: Dialect): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    if (dialect === 'postgres') await sql`select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`.execute(trx);
    await trx.schema
      .createTable('schema_migrations')
      .ifNotExists()
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('applied_at', 'text', (c) => c.notNull())
      .execute();
    const done = new Set(
      (await trx.selectFrom('schema_migrations').select('name').execute()).map((r) => r.name),
    );
    const applied: string[] = [];
    for (const m of MIGRATIONS) {
      if (done.has(m.name)) continue;
      // biome-ignore lint/suspicious/noExplicitAny: see Migration.up.
      await m.up(trx as unknown as Kysely<any>, dialect);
      await trx
        .insertInto('schema_migrations')
        .values({ name: m.name, applied_at: new Date().toISOString() })
        .execute();
      applied.push(m.name);
    }
    return applied;
  });
}

/** The migrations a store still needs, read without writing (a read-only store cannot take them). */
export async function pendingMigrations(db: Kysely<DB>): Promise<string[]> {
  const tables = await db.introspection.getTables();
  if (!tables.some((t) => t.name === 'schema_migrations')) return MIGRATIONS.map((m) => m.name);
  const done = new Set(
    (await db.selectFrom('schema_migrations').select('name').execute()).map((r) => r.name),
  );
  return MIGRATIONS.filter((m) => !done.has(m.name)).map((m) => m.name);
}
