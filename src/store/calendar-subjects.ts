// Whom a school's calendars are of, in few columns: what the admins' search (web/admin-search.ts) folds and
// matches. Read with the names taken out of each record's JSON by the database, so a district's 13,700 subjects
// cost one light query rather than four full listings (a district's teams and students are ~100 ms each to read
// and parse whole, team member lists and all).
import { type RawBuilder, sql } from 'kysely';
import type { Id } from '../domain/types.ts';
import type { SqlContext } from './sql-context.ts';
import type { CalendarSubject, SchoolId } from './types.ts';

type Table = 'teams' | 'students' | 'staff' | 'activities';
const SCOPE_OF = { teams: 'team', students: 'student', staff: 'staff', activities: 'activity' } as const;

/** What each table says of its subjects: the JSON fields of its names, ids an admin may know, and liveness. */
const FIELDS: Record<Table, { names: string[]; ids: string[]; gone?: { field: string; when: boolean } }> = {
  teams: { names: ['name'], ids: [] },
  students: {
    names: ['firstName', 'lastName', 'legalFirstName'],
    ids: ['sisId', 'secondarySisId'],
    gone: { field: 'current', when: false },
  },
  staff: { names: ['firstName', 'lastName'], ids: ['email', 'sisId'], gone: { field: 'frozen', when: true } },
  activities: { names: ['name'], ids: [], gone: { field: 'archived', when: true } },
};

/** The tables the subjects are read from: a write to any other leaves them as they were (subjectsVersion). */
export const SUBJECT_TABLES: ReadonlySet<string> = new Set(Object.keys(FIELDS));

interface Row {
  id: number | string;
  [field: string]: unknown;
}

function jsonField(ctx: SqlContext, field: string): RawBuilder<unknown> {
  return ctx.dialect === 'postgres'
    ? sql`(data::jsonb ->> ${sql.lit(field)})`
    : sql`json_extract(data, ${sql.lit(`$.${field}`)})`;
}

/** A JSON boolean as either dialect returns it (SQLite 1/0, PostgreSQL 'true'/'false'). */
function truthy(v: unknown): boolean {
  return v === 1 || v === true || v === 'true' || v === '1';
}

/**
 * A table's live rows of the school in id order, `readChunk` rows a statement: one statement for a district's
 * 11,000 students held the thread that answers requests for 0.3-0.5 s (at load 30), now that the index is made
 * after every pull that changed the school rather than when an admin first searches. Between statements the
 * loop turns (sqlite-dialect.ts). Not one snapshot: a record changed meanwhile may be in it or not, as in a read
 * a moment earlier or later, and the next pull's data version makes the index again.
 */
async function* pagedRows(
  ctx: SqlContext,
  table: Table,
  schoolId: SchoolId,
  columns: RawBuilder<unknown>[],
): AsyncGenerator<Row> {
  let after: number | string | null = null;
  for (;;) {
    const from: RawBuilder<unknown> = after === null ? sql`` : sql` and id > ${after}`;
    const rows: Row[] = (
      await sql<Row>`select id, ${sql.join(columns)} from ${sql.table(table)} where school_id = ${schoolId} and deleted_at is null${from} order by id limit ${ctx.readChunk}`.execute(
        ctx.r,
      )
    ).rows;
    yield* rows;
    if (rows.length < ctx.readChunk) return;
    after = rows.at(-1)!.id;
  }
}

/** Every live subject of a school's calendars (teams, current students, active staff, live activities). */
export async function listCalendarSubjects(ctx: SqlContext, schoolId: SchoolId): Promise<CalendarSubject[]> {
  const out: CalendarSubject[] = [];
  for (const table of Object.keys(FIELDS) as Table[]) {
    const spec = FIELDS[table];
    const fields = [...spec.names, ...spec.ids, ...(spec.gone ? [spec.gone.field] : [])];
    const columns = fields.map((f) => sql`${jsonField(ctx, f)} as ${sql.ref(f)}`);
    for await (const r of pagedRows(ctx, table, schoolId, columns)) {
      if (spec.gone && truthy(r[spec.gone.field]) === spec.gone.when) continue;
      const text = (f: string) => (typeof r[f] === 'string' && r[f] ? (r[f] as string) : null);
      const name =
        table === 'students' || table === 'staff'
          ? `${text('firstName') ?? ''} ${text('lastName') ?? ''}`.trim()
          : (text('name') ?? '');
      const legal = table === 'students' ? text('legalFirstName') : null;
      out.push({
        scope: SCOPE_OF[table],
        id: Number(r.id) as Id,
        name,
        otherNames: legal && legal !== text('firstName') ? [`${legal} ${text('lastName') ?? ''}`.trim()] : [],
        knownIds: spec.ids.map(text).filter((v): v is string => v !== null),
      });
    }
  }
  return out;
}
