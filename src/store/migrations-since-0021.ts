// Migrations 0021 to 0030, in the order they run (migrations.ts runs the whole list). A new migration goes at the end
// of SINCE_0021, or, once this file nears its bound, into a file of its own whose list migrations.ts appends.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { createLeaseTable, type Migration, serialKey } from './migration-kit.ts';

/**
 * Issue 27: a job's status names the process that started its last run (so a run whose replica died reads as
 * interrupted) and its last skipped fire; a full pull asked for while another pull runs is kept until one runs
 * (`pull_requests`); a record one complete listing left out waits for a second before it is deleted
 * (`missing_records`).
 */
const scheduleHonesty: Migration = {
  name: '0021_i27_job_owner_full_requests_missing_records',
  async up(db) {
    await db.schema.alterTable('job_status').addColumn('owner', 'text').execute();
    await db.schema.alterTable('job_status').addColumn('last_skipped_at', 'text').execute();
    await db.schema.alterTable('job_status').addColumn('last_skip_reason', 'text').execute();
    await db.schema
      .createTable('pull_requests')
      .addColumn('school_id', 'text', (c) => c.primaryKey())
      .addColumn('full_requested_at', 'text', (c) => c.notNull())
      .addColumn('requested_by', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('missing_records')
      .addColumn('school_id', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('id', 'bigint', (c) => c.notNull())
      .addColumn('since', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('missing_records_pk', ['school_id', 'kind', 'id'])
      .execute();
  },
};

/**
 * Issue 25: the feed rotation record lives in the store too (shared by every replica, each mirroring it into its
 * DATA_DIR), with the fingerprint of the feed secret it vouches for.
 */
const feedRotationRecord: Migration = {
  name: '0022_i25_feed_rotation_record',
  async up(db, dialect) {
    await db.schema
      .createTable('feed_rotation_record')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('secret', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('feed_rotations')
      .addColumn('seq', ...serialKey(dialect))
      .addColumn('rotated_at', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('school_id', 'text', (c) => c.notNull())
      .addColumn('scope', 'text', (c) => c.notNull())
      .addColumn('scope_id', 'bigint', (c) => c.notNull())
      .execute();
  },
};

/**
 * Issue 26: the installation's own part of every event UID (`session-…@<school>.<uid_domain>.rostercal`), so two
 * installations, or two schools whose upstreams reuse ids, never publish one UID. Made once, here, at random,
 * for a new store. A store that has published anything (feed tokens, rendered feeds, event versions, family
 * links, pushed events) keeps the UIDs its subscribers hold: its row says so with an empty uid_domain.
 */
const installationUidDomain: Migration = {
  name: '0023_i26_installation_uid_domain',
  async up(db) {
    await db.schema
      .createTable('installation')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('uid_domain', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    let published = false;
    for (const table of [
      'feed_tokens',
      'rendered_feeds',
      'feed_event_versions',
      'family_links',
      'push_mappings',
    ]) {
      const row = await db.selectFrom(table).select(sql<number>`1`.as('one')).limit(1).executeTakeFirst();
      if (row) published = true;
    }
    await db
      .insertInto('installation')
      .values({
        id: 1,
        uid_domain: published ? '' : randomBytes(6).toString('hex'),
        created_at: new Date().toISOString(),
      })
      .execute();
  },
};

/**
 * The mark of each school's last complete feed re-render pass (data version, window day, issued feeds): a pull
 * that leaves them all as they were starts no pass, on whichever replica runs it (feeds/school-rerender.ts).
 */
const renderPasses: Migration = {
  name: '0024_i28_render_passes',
  async up(db) {
    await db.schema
      .createTable('render_passes')
      .addColumn('school_id', 'text', (c) => c.primaryKey())
      .addColumn('mark', 'text', (c) => c.notNull())
      .addColumn('at', 'text', (c) => c.notNull())
      .execute();
  },
};

/**
 * How far the upstream's clock was from this server's during a pull (ms, upstream minus ours; null: no answer
 * carried a `Date`), so `status` and /admin can say so: cursors follow the upstream's clock, not ours.
 */
const runUpstreamSkew: Migration = {
  name: '0026_i41_run_upstream_skew',
  async up(db) {
    await db.schema.alterTable('sync_runs').addColumn('upstream_skew_ms', 'bigint').execute();
  },
};

/**
 * Families' absence reports reserved in the store before the upstream write, one per (school, child, session),
 * and their acts per client address: what every replica decides by (issue 40).
 */
const familyAbsenceActs: Migration = {
  name: '0025_i40_family_absence_acts',
  async up(db, dialect) {
    await db.schema
      .createTable('family_absence_acts')
      .addColumn('school_id', 'text', (c) => c.notNull())
      .addColumn('student_id', 'bigint', (c) => c.notNull())
      .addColumn('session_id', 'bigint', (c) => c.notNull())
      .addColumn('link_id', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('absence_id', 'bigint')
      .addColumn('start_at', 'text', (c) => c.notNull())
      .addColumn('end_at', 'text', (c) => c.notNull())
      .addColumn('reserved_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('family_absence_acts_pk', ['school_id', 'student_id', 'session_id'])
      .execute();
    await db.schema
      .createIndex('family_absence_acts_state')
      .on('family_absence_acts')
      .columns(['state', 'updated_at'])
      .execute();
    await db.schema
      .createTable('family_address_acts')
      .addColumn('id', ...serialKey(dialect))
      .addColumn('school_id', 'text', (c) => c.notNull())
      .addColumn('address_key', 'text', (c) => c.notNull())
      .addColumn('at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('family_address_acts_key')
      .on('family_address_acts')
      .columns(['school_id', 'address_key', 'at'])
      .execute();
  },
};

/**
 * A push target's lease in a table of its own: pushes borrowed `pull_leases` under a `push:` key, so a pull lease
 * and a push lease were told apart only by a school id having no ':'.
 */
const pushLeases: Migration = {
  name: '0027_i45_push_leases',
  async up(db) {
    await createLeaseTable(db, 'push_leases', 'target');
    // A push lease an older process left behind in the pull table is no longer looked at.
    await db.deleteFrom('pull_leases').where('school_id', 'like', 'push:%').execute();
  },
};

/** Whom a school's calendars are of, versioned apart: the admins' search index is made again only when it moves. */
const subjectsVersion: Migration = {
  name: '0028_i45_subjects_version',
  async up(db) {
    await db.schema
      .alterTable('data_versions')
      .addColumn('subjects_version', 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
  },
};

/**
 * Fencing tokens for leases (issue 45): each acquisition and takeover raises the lease's `fence` by one, and a
 * pull's writes are checked, in their own transaction, against the fence it took (lease-fence.ts). A released
 * lease keeps its row (owner and token '') so that its fence never goes back. Rows already there start at 0; every
 * acquisition from now on is 1 or more.
 */
const leaseFences: Migration = {
  name: '0029_i45_lease_fences',
  async up(db) {
    for (const table of ['pull_leases', 'push_leases'])
      await db.schema
        .alterTable(table)
        .addColumn('fence', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
  },
};

/** `fire_claims` (0001) is unused: PostgreSQL's fires are elected in the job queue (fire-queue.ts), SQLite's never. */
const dropFireClaims: Migration = {
  name: '0030_i45_drop_fire_claims',
  async up(db) {
    await db.schema.dropTable('fire_claims').ifExists().execute();
  },
};

export const SINCE_0021: readonly Migration[] = [
  scheduleHonesty,
  feedRotationRecord,
  installationUidDomain,
  renderPasses,
  runUpstreamSkew,
  familyAbsenceActs,
  pushLeases,
  subjectsVersion,
  leaseFences,
  dropFireClaims,
];
