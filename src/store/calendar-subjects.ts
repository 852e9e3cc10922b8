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

/** Every live subject of a school's calendars (teams, current students, active staff, live activities). */
export async function listCalendarSubjects(ctx: SqlContext, schoolId: SchoolId): Promise<CalendarSubject[]> {
  const out: CalendarSubject[] = [];
  for (const table of Object.keys(FIELDS) as Table[]) {
    const spec = FIELDS[table];
    const fields = [...spec.names, ...spec.ids, ...(spec.gone ? [spec.gone.field] : [])];
    const columns = fields.map((f) => sql`${jsonField(ctx, f)} as ${sql.ref(f)}`);
    const rows = (
      await sql<Row>`select id, ${sql.join(columns)} from ${sql.table(table)} where school_id = ${schoolId} and deleted_at is null`.execute(
        ctx.r,
      )
    ).rows;
    for (const r of rows) {
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
