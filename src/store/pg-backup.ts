// A PostgreSQL store's backup and restore by the server's own tools, pg_dump and pg_restore (custom format): one
// consistent snapshot while serve writes, restored into an empty database. The password never reaches a command
// line (other users' `ps` shows those): it goes to the tool as PGPASSWORD.
//
// Like the SQLite copy (sqlite-backup.ts), the dump leaves out the rotation record's row (which secret it vouches
// for): a backup knows only the rotations made before it, so it must never vouch for the secret on its own.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

/** The URL without its password, and the environment that hands the password over. */
function connection(url: string): { dbname: string; env: NodeJS.ProcessEnv } {
  const u = new URL(url);
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (u.password) env.PGPASSWORD = decodeURIComponent(u.password);
  u.password = '';
  return { dbname: u.toString(), env };
}

async function tool(name: 'pg_dump' | 'pg_restore', args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  try {
    await run(name, args, { env, maxBuffer: 16 * 1024 * 1024 });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT')
      throw new Error(`${name} is not installed (or not on PATH): install the PostgreSQL client tools`);
    // Their own words, without the command line (which names the database URL): the lines that say what went
    // wrong, since after its error pg_restore prints the SQL it ran, which alone hid why ("… already exists").
    const lines = (e.stderr ?? e.message).trim().split('\n');
    const errors = lines.filter((l) => l.startsWith(`${name}: error:`));
    throw new Error(`${name} failed: ${(errors.length ? errors : lines).slice(-5).join(' ')}`);
  }
}

/** Dumps the database at `url` into `dest` (custom format), consistent while others write. */
export async function dumpPostgres(url: string, dest: string): Promise<void> {
  const { dbname, env } = connection(url);
  await tool(
    'pg_dump',
    [
      '--format=custom',
      '--no-owner',
      '--no-privileges',
      '--exclude-table-data=feed_rotation_record',
      `--file=${dest}`,
      `--dbname=${dbname}`,
    ],
    env,
  );
}

/** How many tables the database at `url` holds in its public schema (a restore wants none). */
export async function postgresTables(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(
      "select count(*)::int as n from pg_tables where schemaname = 'public'",
    );
    return (rows[0] as { n: number }).n;
  } finally {
    await client.end();
  }
}

/** Restores a dumpPostgres file into the (empty) database at `url`, all or nothing. */
export async function restorePostgres(url: string, file: string): Promise<void> {
  const { dbname, env } = connection(url);
  await tool(
    'pg_restore',
    ['--no-owner', '--no-privileges', '--exit-on-error', '--single-transaction', `--dbname=${dbname}`, file],
    env,
  );
}
