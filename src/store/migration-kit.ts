// What every migration module shares: a migration's shape and the few column and table builders more than one uses.
import type { ColumnDefinitionBuilder, Kysely } from 'kysely';

export type Dialect = 'sqlite' | 'postgres';

export interface Migration {
  name: string;
  // biome-ignore lint/suspicious/noExplicitAny: migrations describe the schema as it was when written, not today's DB type.
  up(db: Kysely<any>, dialect: Dialect): Promise<void>;
}

export type MigrationDb = Parameters<Migration['up']>[0];

/** A primary key the database numbers: SQLite's AUTOINCREMENT, PostgreSQL's identity. */
export function serialKey(dialect: Dialect) {
  return [
    dialect === 'sqlite' ? 'integer' : 'bigint',
    (c: ColumnDefinitionBuilder) =>
      dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey().generatedByDefaultAsIdentity(),
  ] as const;
}

/** A lease table: what is leased (its key), by whom, the acquisition's token and when. */
export async function createLeaseTable(db: MigrationDb, table: 'pull_leases' | 'push_leases', key: string) {
  await db.schema
    .createTable(table)
    .addColumn(key, 'text', (c) => c.primaryKey())
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('acquired_at', 'text', (c) => c.notNull())
    .execute();
}
