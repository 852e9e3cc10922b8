// rostercal migrate: applies pending store migrations to the database the environment names
// (DATABASE_URL for PostgreSQL, else the SQLite file under DATA_DIR, default ./data).
import { parseArgs } from 'node:util';
import { openStore, sqlitePath } from '../store/index.ts';

const HELP = `usage: rostercal migrate

Applies pending store migrations and prints what it did.
  DATABASE_URL   PostgreSQL connection URL (else SQLite)
  DATA_DIR       directory of the SQLite file rostercal.sqlite (default ./data)`;

/** The database a URL points at, without credentials: fit to print. */
function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `PostgreSQL ${u.hostname}${u.port ? `:${u.port}` : ''}${u.pathname}`;
  } catch {
    return 'PostgreSQL (DATABASE_URL)';
  }
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const databaseUrl = process.env.DATABASE_URL || undefined;
  const dataDir = process.env.DATA_DIR || undefined;
  const where = databaseUrl ? describeUrl(databaseUrl) : `SQLite ${sqlitePath({ dataDir })}`;
  const store = await openStore({ databaseUrl, dataDir, migrate: false });
  try {
    const applied = await store.migrate();
    if (applied.length === 0) console.log(`${where}: schema up to date`);
    else console.log(`${where}: applied ${applied.length} migration(s): ${applied.join(', ')}`);
    return 0;
  } finally {
    await store.close();
  }
}
