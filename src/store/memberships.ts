// The membership tables (session → students, team → students, …): rows derived from the records that own them,
// written and cleared with those records (records.ts). Rows a transaction writes wait until it ends, to go in
// once in key order (membership-buffer.ts).
import type { Transaction } from 'kysely';
import { sql } from 'kysely';
import type { Id } from '../domain/types.ts';
import { type KindSpec, membersOf } from './kinds.ts';
import { MembershipBuffer, memberOf, ownerOf, type Pair } from './membership-buffer.ts';
import { copyText } from './pg-copy.ts';
import type { DB } from './schema.ts';
import { chunks, PG_BULK_ROWS, type SqlContext } from './sql-context.ts';
import type { SchoolId } from './types.ts';

/** Membership rows per delete statement on PostgreSQL (two id arrays as parameters; the server does the work). */
const MEMBERSHIP_PAIRS = PG_BULK_ROWS * 4;
/**
 * Membership rows per delete statement on SQLite (one JSON list): the statement runs on the thread that serves
 * requests, a primary-key search and delete per pair in a district's ~580,000 session_students; 500 pairs took
 * up to 46 ms of CPU on a loaded host, the longest of a district pull's statements (bench:feeds).
 */
const SQLITE_MEMBERSHIP_PAIRS = 100;

/** A membership table: which column holds the owner (a session, a team) and which the member. */
export type JoinTable = { table: string; owner: string; member: string };

/** One column of [owner, member] pairs as a PostgreSQL array literal: one parameter, however many ids. */
function int8Array(pairs: readonly (readonly [number, number])[], column: 0 | 1): string {
  return `{${pairs.map((p) => p[column]).join(',')}}`;
}

/** Rows per piece of keyLines' text. */
const LINES_PER_PIECE = 2_048;

/** Sorted membership keys (membership-buffer.ts) as COPY text rows `school, member, owner`, a block at a time. */
function* keyLines(schoolId: SchoolId, keys: Float64Array): Generator<string> {
  const school = `${copyText(schoolId)}\t`;
  let piece = '';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    piece += `${school}${memberOf(key)}\t${ownerOf(key)}\n`;
    if ((i + 1) % LINES_PER_PIECE === 0) {
      yield piece;
      piece = '';
    }
  }
  if (piece !== '') yield piece;
}

export class MembershipRows {
  readonly #ctx: SqlContext;
  /** Rows deferred to the end of each open transaction, per join table and school. */
  readonly #deferred = new WeakMap<
    Transaction<DB>,
    Map<string, { join: JoinTable; schoolId: SchoolId; rows: MembershipBuffer }>
  >();

  constructor(ctx: SqlContext) {
    this.#ctx = ctx;
    ctx.beforeCommit(() => this.flush());
  }

  /**
   * The membership rows the stored records of `ids` own, per join of the kind, as [owner, member] pairs: what
   * upsertPrepared derived from each record when it wrote it. The membership tables have no owner index (its
   * random-order inserts were most of a full pull's membership writes), so a rewritten record's rows are found
   * from its stored record instead. Reads only records about to be rewritten: a pull drops unchanged ones early.
   */
  async stored<R>(
    spec: KindSpec<R>,
    schoolId: SchoolId,
    ids: readonly Id[],
  ): Promise<[owner: number, member: number][][]> {
    const out = spec.joins.map((): [number, number][] => []);
    for (const batch of chunks(ids, this.#ctx.inChunk)) {
      const rows = await this.#ctx.w
        .selectFrom(spec.table)
        .select(['id', 'data'])
        .where('school_id', '=', schoolId)
        .where((eb) => this.#ctx.inList(eb, 'id', batch, 'int8'))
        .execute();
      for (const row of rows) {
        const owner = Number(row.id);
        const members = membersOf(spec, JSON.parse(row.data) as R);
        for (const [j, list] of members.entries())
          for (const member of list) out[j]!.push([owner, member as number]);
      }
    }
    return out;
  }

  /** Deletes the given membership rows by primary key: one statement per batch, whatever its size. */
  async delete(
    join: JoinTable,
    schoolId: SchoolId,
    pairs: readonly [owner: number, member: number][],
  ): Promise<void> {
    const table = sql.table(join.table);
    const key = sql`(${sql.ref(join.member)}, ${sql.ref(join.owner)})`;
    const perStatement = this.#ctx.dialect === 'postgres' ? MEMBERSHIP_PAIRS : SQLITE_MEMBERSHIP_PAIRS;
    for (const batch of chunks(pairs, perStatement)) {
      const list =
        this.#ctx.dialect === 'postgres'
          ? sql`select * from unnest(${int8Array(batch, 1)}::int8[], ${int8Array(batch, 0)}::int8[])`
          : sql`select value ->> 0, value ->> 1 from json_each(${JSON.stringify(batch.map((p) => [p[1], p[0]]))})`;
      await sql`delete from ${table} where school_id = ${schoolId} and ${key} in (${list})`.execute(
        this.#ctx.w,
      );
    }
  }

  /** The open transaction's deferred membership rows of one join table and school (see SqlRecords.upsertPrepared). */
  deferred(join: JoinTable, schoolId: SchoolId): MembershipBuffer {
    const trx = this.#ctx.openTransaction;
    if (!trx) throw new Error('membership rows are deferred only inside a transaction');
    let pending = this.#deferred.get(trx);
    if (!pending) {
      pending = new Map();
      this.#deferred.set(trx, pending);
    }
    const key = `${join.table}\u0000${schoolId}`;
    let entry = pending.get(key);
    if (!entry) {
      entry = { join, schoolId, rows: new MembershipBuffer() };
      pending.set(key, entry);
    }
    return entry.rows;
  }

  /** Inserts the open transaction's deferred membership rows, each table's in primary-key order. */
  async flush(): Promise<void> {
    const trx = this.#ctx.openTransaction;
    const pending = trx && this.#deferred.get(trx);
    if (!pending) return;
    this.#deferred.delete(trx);
    for (const { join, schoolId, rows } of pending.values()) {
      if (this.#ctx.dialect === 'postgres') {
        // One COPY per table, its rows generated as the server takes them: our text and the server's inserts
        // overlap for the whole table, where a COPY per 20,000 rows made each wait for the other.
        // Its text straight from the sorted keys, a block of rows a piece: no pair, value array or escaping per
        // row (ids are numbers), which a school's ~75,000 session_students rows paid each (issue 46).
        if (rows.size > 0) await this.#copyKeys(join, schoolId, rows.drainSorted());
        continue;
      }
      // Straight from the sorted keys: no array per pair, which a district's session_students would make by the
      // hundred thousand.
      const keys = rows.drainSorted();
      await this.#ctx.insertSqlite(
        join.table,
        ['school_id', join.member, join.owner],
        keys.length,
        (params, i) => {
          const key = keys[i]!;
          params.push(schoolId, memberOf(key), ownerOf(key));
        },
      );
    }
  }

  /**
   * A kind's membership rows (session → students…), under upsertPrepared's lock. PostgreSQL: COPY, faster than
   * two unnested id arrays for a district's rows. SQLite: multi-row VALUES (dropping its conflict clause measured
   * no faster). On both, a duplicate is an error: it would mean the lock did not hold.
   */
  async insert(join: JoinTable, schoolId: SchoolId, pairs: readonly Pair[]): Promise<void> {
    if (pairs.length === 0) return;
    if (this.#ctx.dialect === 'sqlite') {
      // Straight from the pairs: an object per row (computed keys make them dictionaries) costs CPU and garbage
      // by the hundred thousand rows for a district's session_students.
      const columns = ['school_id', join.member, join.owner];
      await this.#ctx.insertSqlite(join.table, columns, pairs.length, (params, i) => {
        const p = pairs[i]!;
        params.push(schoolId, p[1], p[0]);
      });
      return;
    }
    await this.#copy(join, schoolId, pairs);
  }

  async #copyKeys(join: JoinTable, schoolId: SchoolId, keys: Float64Array): Promise<void> {
    await this.#ctx.copyText(join.table, ['school_id', join.member, join.owner], keyLines(schoolId, keys));
  }

  async #copy(join: JoinTable, schoolId: SchoolId, pairs: Iterable<Pair>): Promise<void> {
    await this.#ctx.copyRows(join.table, ['school_id', join.member, join.owner], pairs, (p) => [
      schoolId,
      p[1],
      p[0],
    ]);
  }
}
