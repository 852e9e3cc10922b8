// Families' acts as every replica decides them (issue 40): reservations of absence reports and acts per client
// address. Each decision reads and writes under one lock in the database: PostgreSQL's transaction-scoped advisory
// lock on the child (or the address), SQLite's single writer (BEGIN IMMEDIATE, one connection), so two replicas,
// or two requests of one, never both see room for one more.
import { sql } from 'kysely';
import type { Id, Instant } from '../domain/types.ts';
import { storedInstant } from './instants.ts';
import type { FamilyAbsenceActsTable } from './schema.ts';
import type { SqlContext } from './sql-context.ts';
import type {
  AbsenceAct,
  AbsenceActKey,
  AbsenceActState,
  FamilyActsRepository,
  Reservation,
  SchoolId,
} from './types.ts';

/** Arbitrary constant: the first half of the advisory lock keys of families' acts on PostgreSQL. */
const LOCK_SPACE = 40_250;

function toAct(r: FamilyAbsenceActsTable): AbsenceAct {
  return {
    schoolId: r.school_id,
    studentId: Number(r.student_id),
    sessionId: Number(r.session_id),
    linkId: r.link_id,
    state: r.state as AbsenceActState,
    absenceId: r.absence_id === null ? null : Number(r.absence_id),
    start: r.start_at,
    end: r.end_at,
    reservedAt: r.reserved_at,
    updatedAt: r.updated_at,
  };
}

function toRow(a: AbsenceAct): FamilyAbsenceActsTable {
  return {
    school_id: a.schoolId,
    student_id: a.studentId,
    session_id: a.sessionId,
    link_id: a.linkId,
    state: a.state,
    absence_id: a.absenceId,
    start_at: storedInstant(a.start, 'start'),
    end_at: storedInstant(a.end, 'end'),
    reserved_at: storedInstant(a.reservedAt, 'reservedAt'),
    updated_at: storedInstant(a.updatedAt, 'updatedAt'),
  };
}

const STANDING: readonly AbsenceActState[] = ['pending', 'unknown', 'reported', 'undoing'];
/** An act not made stands for nothing: every read of acts but the settle step's leaves it out. */
const NOT_MADE: AbsenceActState = 'not-made';

export class SqlFamilyActs implements FamilyActsRepository {
  readonly #ctx: SqlContext;

  constructor(ctx: SqlContext) {
    this.#ctx = ctx;
  }

  /** fn in a transaction holding the lock named `key` (PostgreSQL; SQLite's writer is one at a time already). */
  #locked<T>(key: string, fn: () => Promise<T>): Promise<T> {
    return this.#ctx.transaction(async () => {
      if (this.#ctx.dialect === 'postgres')
        await sql`select pg_advisory_xact_lock(${LOCK_SPACE}, hashtext(${key}))`.execute(this.#ctx.w);
      return fn();
    });
  }

  /** The act of `key` in any state, read through `db` (the writer inside a lock, the reader otherwise). */
  #find(key: AbsenceActKey, db = this.#ctx.w) {
    return db
      .selectFrom('family_absence_acts')
      .selectAll()
      .where('school_id', '=', key.schoolId)
      .where('student_id', '=', key.studentId)
      .where('session_id', '=', key.sessionId)
      .executeTakeFirst();
  }

  reserveAbsence(
    act: AbsenceAct,
    limit: { max: number; since: Instant },
    then?: () => Promise<unknown>,
  ): Promise<Reservation> {
    return this.#locked(`absences|${act.schoolId}|${act.studentId}`, async () => {
      const existing = await this.#find(act);
      if (existing && existing.state !== NOT_MADE) return { taken: false, existing: toAct(existing) };
      const { n } = await this.#ctx.w
        .selectFrom('family_absence_acts')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('school_id', '=', act.schoolId)
        .where('student_id', '=', act.studentId)
        .where('state', 'in', STANDING)
        .where('reserved_at', '>=', storedInstant(limit.since, 'since'))
        .executeTakeFirstOrThrow();
      if (Number(n) >= limit.max) return { taken: false, standing: Number(n) };
      // A report again over one not made replaces it (its late write, if any, is found by the send's read).
      if (existing) await this.releaseAbsenceAct(act, [NOT_MADE]);
      await this.#ctx.w.insertInto('family_absence_acts').values(toRow(act)).execute();
      await then?.();
      return { taken: true };
    });
  }

  async getAbsenceAct(key: AbsenceActKey): Promise<AbsenceAct | null> {
    const row = await this.#find(key, this.#ctx.r);
    return row && row.state !== NOT_MADE ? toAct(row) : null;
  }

  async listAbsenceActs(schoolId: SchoolId, studentIds: readonly Id[]): Promise<AbsenceAct[]> {
    if (studentIds.length === 0) return [];
    const rows = await this.#ctx.r
      .selectFrom('family_absence_acts')
      .selectAll()
      .where('school_id', '=', schoolId)
      .where((eb) => this.#ctx.inList(eb, 'student_id', studentIds, 'int8'))
      .where('state', '!=', NOT_MADE)
      .execute();
    return rows.map(toAct);
  }

  async listUnsettledAbsenceActs(states: readonly AbsenceActState[], before: Instant): Promise<AbsenceAct[]> {
    if (states.length === 0) return [];
    const rows = await this.#ctx.r
      .selectFrom('family_absence_acts')
      .selectAll()
      .where('state', 'in', states)
      .where('updated_at', '<', storedInstant(before, 'before'))
      .orderBy('updated_at')
      .limit(500)
      .execute();
    return rows.map(toAct);
  }

  moveAbsenceAct(
    act: AbsenceAct,
    from: readonly (AbsenceActState | null)[],
    then?: () => Promise<unknown>,
  ): Promise<boolean> {
    return this.#locked(`absences|${act.schoolId}|${act.studentId}`, async () => {
      let row = await this.#find(act);
      // An act not made is none to a move from none (an undo of the absence a late write made): it is replaced.
      if (row?.state === NOT_MADE && from.includes(null) && (await this.releaseAbsenceAct(act, [NOT_MADE])))
        row = undefined;
      if (!row ? !from.includes(null) : !from.includes(row.state as AbsenceActState)) return false;
      const values = toRow(act);
      if (!row) await this.#ctx.w.insertInto('family_absence_acts').values(values).execute();
      else
        await this.#ctx.w
          .updateTable('family_absence_acts')
          .set({
            state: values.state,
            absence_id: values.absence_id,
            link_id: values.link_id,
            updated_at: values.updated_at,
          })
          .where('school_id', '=', act.schoolId)
          .where('student_id', '=', act.studentId)
          .where('session_id', '=', act.sessionId)
          .execute();
      await then?.();
      return true;
    });
  }

  async releaseAbsenceAct(key: AbsenceActKey, from: readonly AbsenceActState[]): Promise<boolean> {
    if (from.length === 0) return false;
    const res = await this.#ctx.w
      .deleteFrom('family_absence_acts')
      .where('school_id', '=', key.schoolId)
      .where('student_id', '=', key.studentId)
      .where('session_id', '=', key.sessionId)
      .where('state', 'in', from)
      .executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  async pruneFamilyActs(before: Instant): Promise<number> {
    const cut = storedInstant(before, 'before');
    const acts = await this.#ctx.w.deleteFrom('family_address_acts').where('at', '<', cut).executeTakeFirst();
    const reported = await this.#ctx.w
      .deleteFrom('family_absence_acts')
      .where('state', '=', 'reported')
      .where('end_at', '<', cut)
      .where('reserved_at', '<', cut)
      .executeTakeFirst();
    const notMade = await this.#ctx.w
      .deleteFrom('family_absence_acts')
      .where('state', '=', NOT_MADE)
      .where('reserved_at', '<', cut)
      .executeTakeFirst();
    return Number(acts.numDeletedRows) + Number(reported.numDeletedRows) + Number(notMade.numDeletedRows);
  }

  takeAddressAct(
    schoolId: SchoolId,
    addressKey: string,
    limit: { at: Instant; since: Instant; max: number },
  ): Promise<{ ok: true } | { ok: false; oldest: Instant }> {
    return this.#locked(`address|${schoolId}|${addressKey}`, async () => {
      const since = storedInstant(limit.since, 'since');
      await this.#ctx.w
        .deleteFrom('family_address_acts')
        .where('school_id', '=', schoolId)
        .where('address_key', '=', addressKey)
        .where('at', '<', since)
        .execute();
      const recent = await this.#ctx.w
        .selectFrom('family_address_acts')
        .select('at')
        .where('school_id', '=', schoolId)
        .where('address_key', '=', addressKey)
        .orderBy('at')
        .execute();
      if (recent.length >= limit.max) return { ok: false, oldest: recent[0]!.at };
      await this.#ctx.w
        .insertInto('family_address_acts')
        .values({ school_id: schoolId, address_key: addressKey, at: storedInstant(limit.at, 'at') })
        .execute();
      return { ok: true };
    });
  }
}
