// The snapshot: schools, every record a pull writes (with their membership rows and the data version feeds cache
// by), the reads that projection, feeds, rosters and push make of it, the pull's cursors, and the records a full
// listing left out.
import { type CompiledQuery, type Expression, type SqlBool, sql, type Transaction } from 'kysely';
import type { Id, Instant } from '../domain/types.ts';
import { listCalendarSubjects, SUBJECT_TABLES } from './calendar-subjects.ts';
import { maybeInstant, storedInstant } from './instants.ts';
import { type KindSpec, kindSpec, prepareRecord } from './kinds.ts';
import { fenceHeld, LeaseLostError, type PullFence } from './lease-fence.ts';
import { MembershipBuffer, type Pair } from './membership-buffer.ts';
import { MembershipRows } from './memberships.ts';
import type { DB, SnapshotTable } from './schema.ts';
import { chunks, type Row, type SqlContext } from './sql-context.ts';
import type {
  AbsenceQuery,
  CalendarSubject,
  PreparedRecord,
  RecordsRepository,
  ResourceKind,
  ResourceMap,
  SchoolId,
  SessionQuery,
  Stored,
  UpsertStats,
} from './types.ts';

function toStored<K extends ResourceKind>(row: {
  data: string;
  version: number;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}): Stored<K> {
  const record = JSON.parse(row.data) as ResourceMap[K];
  return {
    ...record,
    meta: {
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      version: Number(row.version),
      deletedAt: row.deleted_at,
    },
  };
}

/** What an open transaction has done once and need not do again (see SqlRecords.#once). */
interface TransactionMarks {
  /** Schools whose data version it bumps, once, just before it commits; true: their subjects' version too. */
  bump: Map<SchoolId, boolean>;
}

export class SqlRecords implements RecordsRepository {
  readonly #ctx: SqlContext;
  readonly #memberships: MembershipRows;
  readonly #marks = new WeakMap<Transaction<DB>, TransactionMarks>();
  /**
   * Each school's name and time zone as this connection last wrote them, committed. Every pull writes its school
   * first (serve wrote them all at its start): a round trip each at every fire on PostgreSQL that changed nothing,
   * since nothing deletes a school's row (issue 46).
   */
  readonly #schoolsWritten = new Map<SchoolId, string>();

  constructor(ctx: SqlContext) {
    this.#ctx = ctx;
    this.#memberships = new MembershipRows(ctx);
    ctx.beforeCommit(() => this.#bumpMarked());
  }

  /**
   * The open transaction's marks. A resource's transaction writes its kind in several calls (a chunk of records
   * each, custom fields, deletions): each bumped the data version again, a round trip each on PostgreSQL that
   * changed nothing (issue 46); readers only ever see the commit.
   */
  #once(): TransactionMarks | undefined {
    const trx = this.#ctx.openTransaction;
    if (!trx) return undefined;
    let marks = this.#marks.get(trx);
    if (!marks) {
      marks = { bump: new Map() };
      this.#marks.set(trx, marks);
    }
    return marks;
  }

  async upsertSchool(school: { id: SchoolId; name: string; timeZone: string }): Promise<void> {
    const written = JSON.stringify([school.name, school.timeZone]);
    // Inside a transaction the write may yet roll back: only a write of its own is known to be there.
    const alone = this.#ctx.openTransaction === undefined;
    if (alone && this.#schoolsWritten.get(school.id) === written) return;
    const now = new Date().toISOString();
    await this.#ctx.w
      .insertInto('schools')
      .values({
        id: school.id,
        name: school.name,
        time_zone: school.timeZone,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) =>
        oc.column('id').doUpdateSet({ name: school.name, time_zone: school.timeZone, updated_at: now }),
      )
      .execute();
    if (alone) this.#schoolsWritten.set(school.id, written);
    else this.#schoolsWritten.delete(school.id);
  }

  async listSchools(): Promise<{ id: SchoolId; name: string; timeZone: string }[]> {
    const rows = await this.#ctx.r
      .selectFrom('schools')
      .select(['id', 'name', 'time_zone'])
      .orderBy('id')
      .execute();
    return rows.map((r) => ({ id: r.id, name: r.name, timeZone: r.time_zone }));
  }

  // --- snapshot writes

  async upsert<K extends ResourceKind>(
    schoolId: SchoolId,
    kind: K,
    records: ResourceMap[K][],
    at: Instant,
  ): Promise<UpsertStats> {
    return this.upsertPrepared(
      schoolId,
      kind,
      records.map((r) => prepareRecord(kind, r)),
      at,
    );
  }

  async upsertPrepared(
    schoolId: SchoolId,
    kind: ResourceKind,
    records: readonly PreparedRecord[],
    at: Instant,
  ): Promise<UpsertStats> {
    const stats: UpsertStats = { added: 0, changed: 0, unchanged: 0, restored: 0 };
    if (records.length === 0) return stats;
    const spec = kindSpec(kind);
    const now = storedInstant(at, 'upsert');

    // Last occurrence of an id wins: a listing that repeats a record must not write it twice.
    const incoming = new Map<Id | string, PreparedRecord>();
    for (const record of records) incoming.set(record.key, record);

    return this.#ctx.transaction(async () => {
      const db = this.#ctx.w;
      const table = spec.table;
      // One writer of a kind at a time, until commit. SQLite's single write connection already gives this; on
      // PostgreSQL two overlapping pulls (a lease taken over from a stalled replica) would otherwise both read
      // "not stored yet" and both insert. Serialised, a record new to this transaction owns no membership rows
      // (owners are never removed, only marked deleted), so memberships are inserted without a conflict check.
      await this.#ctx.lock(schoolId, table);
      const existing = new Map<Id | string, { hash: string; version: number; deleted_at: string | null }>();
      for (const ids of chunks([...incoming.keys()], this.#ctx.inChunk)) {
        const rows = await db
          .selectFrom(table)
          .select(['id', 'hash', 'version', 'deleted_at'])
          .where('school_id', '=', schoolId)
          .where((eb) => this.#ctx.inList(eb, 'id', ids, idType(kind)))
          .execute();
        for (const r of rows) existing.set(normaliseId(r.id, kind), r);
      }

      const writes: SnapshotTable[] = [];
      const written: { record: PreparedRecord; existed: boolean }[] = [];
      for (const [id, record] of incoming) {
        const old = existing.get(id);
        let version = 0;
        if (old) {
          const sameContent = old.hash === record.hash;
          if (old.deleted_at !== null) stats.restored++;
          else if (sameContent) {
            stats.unchanged++;
            continue;
          } else stats.changed++;
          version = sameContent ? Number(old.version) : Number(old.version) + 1;
        } else stats.added++;
        writes.push(snapshotRow(spec, schoolId, record, version, now));
        written.push({ record, existed: old !== undefined });
      }
      if (writes.length === 0) return stats;

      // New records own no membership rows yet: only rewritten ones need theirs cleared, found from the members
      // their stored record lists (the rows were derived from it) before it is overwritten, by primary key.
      const rewritten = written.filter((w) => w.existed).map((w) => w.record.key as Id);
      // Rows deferred earlier in this transaction may be among them: in their table first, then found and deleted.
      if (rewritten.length > 0) await this.#memberships.flush();
      const stale = spec.joins.length > 0 ? await this.#memberships.stored(spec, schoolId, rewritten) : [];

      const columns = Object.keys(writes[0]!);
      const upsert = {
        columns: ['school_id', 'id'],
        update: columns.filter((c) => c !== 'school_id' && c !== 'id' && c !== 'created_at'),
      };
      if (this.#ctx.dialect === 'postgres') {
        // Records new to the store cannot conflict (the lock above), so they go in by COPY; rewrites upsert.
        const fresh: Row[] = [];
        const rewrites: Row[] = [];
        for (const [i, row] of (writes as unknown as Row[]).entries()) {
          (written[i]!.existed ? rewrites : fresh).push(row);
        }
        await this.#ctx.copyRows(table, columns, fresh, (row) => columns.map((c) => row[c] ?? null));
        await this.#ctx.insertRows(table, rewrites, upsert);
      } else await this.#ctx.insertRows(table, writes as unknown as Row[], upsert);

      for (const [j, join] of spec.joins.entries()) {
        await this.#memberships.delete(join, schoolId, stale[j] ?? []);
        // Deferred to the end of the transaction, to go in with the rest of the resource's rows in key order
        // (membership-buffer.ts); the rare pair whose ids the buffer cannot hold goes in now.
        const deferred = this.#memberships.deferred(join, schoolId);
        const now: Pair[] = [];
        for (const { record } of written) {
          const owner = record.key as number;
          for (const member of (record.members[j] ?? []) as number[]) {
            if (MembershipBuffer.fits(owner, member)) deferred.add(owner, member);
            else now.push([owner, member]);
          }
        }
        now.sort((a, b) => a[1] - b[1] || a[0] - b[0]);
        await this.#memberships.insert(join, schoolId, now);
      }

      await this.#bumpDataVersion(schoolId, spec.table);
      return stats;
    });
  }

  async rewriteRecords<K extends ResourceKind>(
    schoolId: SchoolId,
    kind: K,
    fn: (record: ResourceMap[K]) => ResourceMap[K],
    except: ReadonlySet<Id | string> = new Set(),
  ): Promise<number> {
    const spec = kindSpec(kind);
    return this.#ctx.transaction(async () => {
      // Ids first: a pull that has just rewritten every live team leaves only the deleted ones to read.
      const all = await this.#ctx.w
        .selectFrom(spec.table)
        .select('id')
        .where('school_id', '=', schoolId)
        .execute();
      const wanted = all.map((r) => normaliseId(r.id, kind)).filter((id) => !except.has(id));
      let changed = 0;
      for (const batch of chunks(wanted, this.#ctx.inChunk)) {
        const rows = await this.#ctx.w
          .selectFrom(spec.table)
          .select(['id', 'data', 'hash'])
          .where('school_id', '=', schoolId)
          .where((eb) => this.#ctx.inList(eb, 'id', batch, idType(kind)))
          .execute();
        for (const row of rows) {
          const next = prepareRecord(kind, fn(JSON.parse(row.data) as ResourceMap[K]));
          if (next.hash === row.hash) continue;
          await this.#ctx.w
            .updateTable(spec.table)
            .set({ data: next.data, hash: next.hash })
            .where('school_id', '=', schoolId)
            .where('id', '=', row.id)
            .execute();
          changed++;
        }
      }
      if (changed > 0) await this.#bumpDataVersion(schoolId, spec.table);
      return changed;
    });
  }

  async liveHashes(schoolId: SchoolId, kind: ResourceKind): Promise<Map<Id | string, string>> {
    const spec = kindSpec(kind);
    const out = new Map<Id | string, string>();
    for await (const rows of this.#byIdChunks((after) => {
      let q = this.#ctx.r
        .selectFrom(spec.table)
        .select(['id', 'hash'])
        .where('school_id', '=', schoolId)
        .where('deleted_at', 'is', null);
      if (after !== null) q = q.where('id', '>', after);
      return q.orderBy('id').limit(this.#ctx.readChunk).execute();
    }))
      for (const r of rows) out.set(normaliseId(r.id, kind), r.hash);
    return out;
  }

  /**
   * A read of every live record of a kind, in id order, a chunk of `readChunk` rows a statement: one statement
   * for a district's sessions held the thread that serves requests for ~100 ms (bench:feeds), and each
   * statement lets the loop turn before the next (sqlite-dialect.ts). Outside a transaction the chunks are not
   * one snapshot: a record another writer adds or deletes meanwhile (a family's reported absence) may be in it
   * or not, as it would be in a read a moment earlier or later. The pull's own kinds change only under its lease.
   */
  async *#byIdChunks<R extends { id: number | string }>(
    read: (after: number | string | null) => Promise<R[]>,
  ): AsyncGenerator<R[]> {
    let after: number | string | null = null;
    for (;;) {
      const rows = await read(after);
      if (rows.length > 0) yield rows;
      if (rows.length < this.#ctx.readChunk) return;
      after = rows.at(-1)!.id;
    }
  }

  /**
   * The school's data version moves when the open transaction commits (or at once, outside one); its subjects'
   * version too when `table` is one they are read from.
   */
  async #bumpDataVersion(schoolId: SchoolId, table: string): Promise<void> {
    const subjects = SUBJECT_TABLES.has(table);
    const marks = this.#once();
    if (marks) marks.bump.set(schoolId, subjects || marks.bump.get(schoolId) === true);
    else await this.#ctx.w.executeQuery(this.#bumpQuery(schoolId, subjects));
  }

  async #bumpMarked(): Promise<void> {
    const trx = this.#ctx.openTransaction;
    const marks = trx && this.#marks.get(trx);
    if (!marks) return;
    // With the transaction's other last writes (its cursors, the run's progress), in one statement on PostgreSQL.
    for (const [schoolId, subjects] of marks.bump)
      await this.#ctx.atCommit(this.#bumpQuery(schoolId, subjects));
    marks.bump.clear();
  }

  #bumpQuery(schoolId: SchoolId, subjects: boolean): CompiledQuery {
    return this.#ctx.w
      .insertInto('data_versions')
      .values({ school_id: schoolId, version: 1, subjects_version: subjects ? 1 : 0 })
      .onConflict((oc) =>
        oc.column('school_id').doUpdateSet({
          version: sql`data_versions.version + 1`,
          ...(subjects ? { subjects_version: sql`data_versions.subjects_version + 1` } : {}),
        }),
      )
      .compile();
  }

  async liveIds(
    schoolId: SchoolId,
    kind: ResourceKind,
    window?: { from: Instant; to: Instant },
  ): Promise<Id[]> {
    const spec = kindSpec(kind);
    if (window && !spec.windowed) throw new Error(`liveIds: ${kind} has no time window`);
    const from = window ? storedInstant(window.from, 'window.from') : null;
    const to = window ? storedInstant(window.to, 'window.to') : null;
    const out: Id[] = [];
    for await (const rows of this.#byIdChunks((after) => {
      let q = this.#ctx.r
        .selectFrom(spec.table)
        .select('id')
        .where('school_id', '=', schoolId)
        .where('deleted_at', 'is', null);
      if (from !== null && to !== null) q = q.where((eb) => intersects(eb, from, to));
      if (after !== null) q = q.where('id', '>', after);
      return q.orderBy('id').limit(this.#ctx.readChunk).execute();
    }))
      for (const r of rows) out.push(normaliseId(r.id, kind) as Id);
    return out;
  }

  async markDeleted(schoolId: SchoolId, kind: ResourceKind, ids: Id[], at: Instant): Promise<number> {
    if (ids.length === 0) return 0;
    const spec = kindSpec(kind);
    const now = storedInstant(at, 'markDeleted');
    return this.#ctx.transaction(async () => {
      let count = 0;
      for (const batch of chunks([...new Set(ids)], this.#ctx.inChunk)) {
        const result = await this.#ctx.w
          .updateTable(spec.table)
          .set({ deleted_at: now })
          .where('school_id', '=', schoolId)
          .where((eb) => this.#ctx.inList(eb, 'id', batch, idType(kind)))
          .where('deleted_at', 'is', null)
          .executeTakeFirst();
        count += Number(result.numUpdatedRows);
      }
      if (count > 0) await this.#bumpDataVersion(schoolId, spec.table);
      return count;
    });
  }

  dataVersion(schoolId: SchoolId): Promise<number> {
    return this.#version(schoolId, 'version');
  }

  subjectsVersion(schoolId: SchoolId): Promise<number> {
    return this.#version(schoolId, 'subjects_version');
  }

  async #version(schoolId: SchoolId, column: 'version' | 'subjects_version'): Promise<number> {
    const row = await this.#ctx.r
      .selectFrom('data_versions')
      .select(column)
      .where('school_id', '=', schoolId)
      .executeTakeFirst();
    return row ? Number(row[column]) : 0;
  }

  // --- snapshot reads

  async get<K extends ResourceKind>(
    schoolId: SchoolId,
    kind: K,
    id: Id | string,
    opts?: { includeDeleted?: boolean },
  ): Promise<Stored<K> | null> {
    const spec = kindSpec(kind);
    let key: Id | string = String(id);
    if (kind !== 'customFields') {
      key = Number(id);
      if (!Number.isSafeInteger(key)) return null;
    }
    let q = this.#ctx.r
      .selectFrom(spec.table)
      .select(['data', 'version', 'created_at', 'updated_at', 'deleted_at'])
      .where('school_id', '=', schoolId)
      .where('id', '=', key);
    if (!opts?.includeDeleted) q = q.where('deleted_at', 'is', null);
    const row = await q.executeTakeFirst();
    return row ? toStored<K>(row) : null;
  }

  async list<K extends ResourceKind>(
    schoolId: SchoolId,
    kind: K,
    opts?: { includeDeleted?: boolean },
  ): Promise<Stored<K>[]> {
    const spec = kindSpec(kind);
    let q = this.#ctx.r
      .selectFrom(spec.table)
      .select(['data', 'version', 'created_at', 'updated_at', 'deleted_at'])
      .where('school_id', '=', schoolId);
    if (!opts?.includeDeleted) q = q.where('deleted_at', 'is', null);
    const rows = await q.orderBy('id').execute();
    return rows.map((r) => toStored<K>(r));
  }

  listCalendarSubjects(schoolId: SchoolId): Promise<CalendarSubject[]> {
    return listCalendarSubjects(this.#ctx, schoolId);
  }

  async listSessions(schoolId: SchoolId, query: SessionQuery): Promise<Stored<'sessions'>[]> {
    if (query.teamIds?.length === 0 || query.activityIds?.length === 0) return [];
    // Inside a transaction, the memberships it wrote must be in their tables before they are asked about.
    await this.#memberships.flush();
    let q = this.#ctx.r
      .selectFrom('sessions as s')
      .select(['s.data', 's.version', 's.created_at', 's.updated_at', 's.deleted_at'])
      .where('s.school_id', '=', schoolId);
    if (!query.includeDeleted) q = q.where('s.deleted_at', 'is', null);
    if (query.from !== undefined || query.to !== undefined) {
      const from = query.from === undefined ? undefined : storedInstant(query.from, 'from');
      const to = query.to === undefined ? undefined : storedInstant(query.to, 'to');
      q = q.where((eb) => intersects(eb, from, to, 's.'));
    }
    if (query.activityIds) q = q.where('s.activity_id', 'in', query.activityIds);
    if (query.teamIds) {
      const teamIds = query.teamIds;
      q = q.where('s.id', 'in', (eb) =>
        eb
          .selectFrom('session_teams')
          .select('session_id')
          .where('school_id', '=', schoolId)
          .where('team_id', 'in', teamIds),
      );
    }
    if (query.staffId !== undefined) {
      const staffId = query.staffId;
      q = q.where('s.id', 'in', (eb) =>
        eb
          .selectFrom('session_staff')
          .select('session_id')
          .where('school_id', '=', schoolId)
          .where('staff_id', '=', staffId),
      );
    }
    if (query.studentId !== undefined) {
      const studentId = query.studentId;
      // One id list (a UNION) the planner can drive the primary-key lookups from: sessions listing the student,
      // plus sessions of the live teams the student is in now (the teams' current rosters).
      q = q.where('s.id', 'in', (eb) =>
        eb
          .selectFrom('session_students')
          .select('session_id')
          .where('school_id', '=', schoolId)
          .where('student_id', '=', studentId)
          .unionAll(
            eb
              .selectFrom('session_teams')
              .select('session_id')
              .where('school_id', '=', schoolId)
              .where('team_id', 'in', (eb2) =>
                eb2
                  .selectFrom('team_students as ts')
                  .innerJoin('teams as t', (j) =>
                    j.onRef('t.school_id', '=', 'ts.school_id').onRef('t.id', '=', 'ts.team_id'),
                  )
                  .select('ts.team_id')
                  .where('ts.school_id', '=', schoolId)
                  .where('ts.student_id', '=', studentId)
                  .where('t.deleted_at', 'is', null),
              ),
          ),
      );
    }
    const rows = await q.orderBy('s.start_at').orderBy('s.id').execute();
    return rows.map((r) => toStored<'sessions'>(r));
  }

  async listAbsences(schoolId: SchoolId, query: AbsenceQuery): Promise<Stored<'absences'>[]> {
    if (query.studentIds?.length === 0) return [];
    let q = this.#ctx.r
      .selectFrom('absences')
      .select(['data', 'version', 'created_at', 'updated_at', 'deleted_at'])
      .where('school_id', '=', schoolId)
      .where('deleted_at', 'is', null);
    if (query.studentIds) q = q.where('student_id', 'in', query.studentIds);
    if (query.from !== undefined || query.to !== undefined) {
      const from = query.from === undefined ? undefined : storedInstant(query.from, 'from');
      const to = query.to === undefined ? undefined : storedInstant(query.to, 'to');
      q = q.where((eb) => intersects(eb, from, to));
    }
    const rows = await q.orderBy('start_at').orderBy('id').execute();
    return rows.map((r) => toStored<'absences'>(r));
  }

  async getCursor(schoolId: SchoolId, key: string): Promise<string | null> {
    const row = await this.#ctx.r
      .selectFrom('sync_cursors')
      .select('value')
      .where('school_id', '=', schoolId)
      .where('key', '=', key)
      .executeTakeFirst();
    return row?.value ?? null;
  }

  async cursors(schoolId: SchoolId): Promise<Map<string, string>> {
    const rows = await this.#ctx.r
      .selectFrom('sync_cursors')
      .select(['key', 'value'])
      .where('school_id', '=', schoolId)
      .execute();
    return new Map(rows.map((r) => [r.key, r.value]));
  }

  async setCursor(schoolId: SchoolId, key: string, value: string): Promise<void> {
    await this.setCursors(schoolId, new Map([[key, value]]));
  }

  async setCursors(
    schoolId: SchoolId,
    values: ReadonlyMap<string, string>,
    opts?: { atCommit?: boolean; fence?: number },
  ): Promise<void> {
    if (values.size === 0) return;
    const now = new Date().toISOString();
    const rows = [...values].map(([key, value]) => ({ school_id: schoolId, key, value, updated_at: now }));
    if (opts?.fence !== undefined && !opts.atCommit) {
      await this.#setCursorsFenced({ schoolId, fence: opts.fence }, rows);
      return;
    }
    if (opts?.atCommit) {
      // A few rows: plain VALUES, a statement that can join the transaction's last one (SqlContext.atCommit).
      const query = this.#ctx.w
        .insertInto('sync_cursors')
        .values(rows)
        .onConflict((oc) =>
          oc.columns(['school_id', 'key']).doUpdateSet((eb) => ({
            value: eb.ref('excluded.value'),
            updated_at: eb.ref('excluded.updated_at'),
          })),
        );
      await this.#ctx.atCommit(query.compile());
      return;
    }
    await this.#ctx.insertRows('sync_cursors', rows, {
      columns: ['school_id', 'key'],
      update: ['value', 'updated_at'],
    });
  }

  /**
   * A pull's cursors written on their own (its last, when no transaction of its carried them), in one statement
   * that writes them only while its lease is held at its fence: none written is the lease lost (lease-fence.ts).
   */
  async #setCursorsFenced(
    fence: PullFence,
    rows: { school_id: string; key: string; value: string; updated_at: string }[],
  ): Promise<void> {
    const tuples = sql.join(rows.map((r) => sql`(${r.school_id}, ${r.key}, ${r.value}, ${r.updated_at})`));
    const result = await sql`
      with v ("school_id", "key", "value", "updated_at") as (values ${tuples})
      insert into "sync_cursors" ("school_id", "key", "value", "updated_at")
      select "school_id", "key", "value", "updated_at" from v where ${fenceHeld(fence, this.#ctx.dialect)}
      on conflict ("school_id", "key") do update set "value" = excluded."value", "updated_at" = excluded."updated_at"
    `.execute(this.#ctx.w);
    if (Number(result.numAffectedRows ?? 0) === 0) throw new LeaseLostError(fence);
  }

  async listMissing(schoolId: SchoolId, kind: ResourceKind): Promise<Map<Id, Instant>> {
    return (await this.listMissingOf(schoolId, [kind])).get(kind)!;
  }

  async listMissingOf(
    schoolId: SchoolId,
    kinds: readonly ResourceKind[],
  ): Promise<Map<ResourceKind, Map<Id, Instant>>> {
    const out = new Map<ResourceKind, Map<Id, Instant>>(kinds.map((k) => [k, new Map()]));
    for (const batch of chunks([...out.keys()], this.#ctx.inChunk)) {
      const rows = await this.#ctx.r
        .selectFrom('missing_records')
        .select(['kind', 'id', 'since'])
        .where('school_id', '=', schoolId)
        .where((eb) => this.#ctx.inList(eb, 'kind', batch, 'text'))
        .execute();
      for (const r of rows) out.get(r.kind as ResourceKind)?.set(Number(r.id), r.since);
    }
    return out;
  }

  async pullState(
    schoolId: SchoolId,
    kinds: readonly ResourceKind[],
  ): Promise<{ cursors: Map<string, string>; missing: Map<ResourceKind, Map<Id, Instant>> }> {
    const missing = new Map<ResourceKind, Map<Id, Instant>>(kinds.map((k) => [k, new Map()]));
    // One list of (kind, key, value): a cursor's kind is null, a missing id's key its id as text.
    const cursors = this.#ctx.r
      .selectFrom('sync_cursors')
      .select([sql<string | null>`cast(null as text)`.as('kind'), 'key', 'value'])
      .where('school_id', '=', schoolId);
    const query =
      kinds.length === 0
        ? cursors
        : cursors.unionAll(
            this.#ctx.r
              .selectFrom('missing_records')
              .select(['kind', sql<string>`cast(id as text)`.as('key'), 'since as value'])
              .where('school_id', '=', schoolId)
              .where((eb) => this.#ctx.inList(eb, 'kind', kinds, 'text')),
          );
    const out = new Map<string, string>();
    for (const r of await query.execute()) {
      if (r.kind === null) out.set(r.key, r.value);
      else missing.get(r.kind as ResourceKind)?.set(Number(r.key), r.value);
    }
    return { cursors: out, missing };
  }

  async setMissing(schoolId: SchoolId, kind: ResourceKind, ids: readonly Id[], at: Instant): Promise<void> {
    const since = storedInstant(at, 'setMissing');
    const wanted = new Set(ids);
    await this.#ctx.transaction(async () => {
      const held = await this.listMissing(schoolId, kind);
      const gone = [...held.keys()].filter((id) => !wanted.has(id));
      for (const batch of chunks(gone, this.#ctx.inChunk)) {
        await this.#ctx.w
          .deleteFrom('missing_records')
          .where('school_id', '=', schoolId)
          .where('kind', '=', kind)
          .where((eb) => this.#ctx.inList(eb, 'id', batch, 'int8'))
          .execute();
      }
      const fresh = [...wanted].filter((id) => !held.has(id));
      for (const batch of chunks(fresh, 500)) {
        await this.#ctx.w
          .insertInto('missing_records')
          .values(batch.map((id) => ({ school_id: schoolId, kind, id, since })))
          .execute();
      }
    });
  }
}

/** Ids come back as numbers from both drivers (int8 is parsed on PostgreSQL); custom fields keep text keys. */
function normaliseId(id: number | string, kind: ResourceKind): Id | string {
  return kind === 'customFields' ? String(id) : Number(id);
}

/** The PostgreSQL type of a kind's ids (custom fields are keyed by text). */
function idType(kind: ResourceKind): 'int8' | 'text' {
  return kind === 'customFields' ? 'text' : 'int8';
}

function snapshotRow<R>(
  spec: KindSpec<R>,
  schoolId: SchoolId,
  record: PreparedRecord,
  version: number,
  now: string,
): SnapshotTable {
  const row: Record<string, unknown> = {
    school_id: schoolId,
    id: record.key,
    data: record.data,
    hash: record.hash,
    version,
    created_at: now,
    updated_at: now,
    deleted_at: null,
  };
  for (const c of spec.extraColumns) {
    const v = record.extras[c];
    row[c] =
      v === undefined
        ? null
        : c === 'start_at' || c === 'end_at'
          ? maybeInstant(v as string | null, 'record time')
          : v;
  }
  return row as unknown as SnapshotTable;
}

/**
 * Rows intersecting [from, to): start < to and end > from. A zero-length row starting at `from` counts as
 * inside (its end is not after `from`, but it happens within the window).
 */
function intersects(
  // biome-ignore lint/suspicious/noExplicitAny: shared by queries over differently aliased tables.
  eb: any,
  from: string | undefined,
  to: string | undefined,
  prefix = '',
): Expression<SqlBool> {
  const parts: Expression<SqlBool>[] = [];
  if (to !== undefined) parts.push(eb(`${prefix}start_at`, '<', to));
  if (from !== undefined)
    parts.push(eb.or([eb(`${prefix}end_at`, '>', from), eb(`${prefix}start_at`, '>=', from)]));
  return eb.and(parts);
}
